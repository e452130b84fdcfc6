"""Hidden stays hidden, tried as an attacker would with a real bwrap, as root and as an unprivileged user: with the
home folder as the workspace, renaming a parent of a hidden path fails (every folder between the workspace and a
hidden path is a mount point), and no secret Meowgent reads or the home folder keeps is ever in a result."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from meowgent.tools.mounts import HostView, SandboxPolicy, bwrap_options, pinned_between
from tests.sandboxing import needs_sandbox, run_commands
from tests.unprivileged import Runner

BUSY = "Device or resource busy"
SECRETS = {
    ".config/gh/hosts.yml": "gho_GITHUBTOKEN",
    ".config/git/credentials": "https://cat:GITPASSWORD@example.com",
    ".config/containers/auth.json": '{"auths": {"quay.io": {"auth": "PODMANAUTH"}}}',
    ".ollama/id_ed25519": "OLLAMAPRIVATEKEY",
    ".cache/huggingface/token": "hf_HUGGINGFACETOKEN",
    "keys/openai.txt": "sk-OPENAIKEY",
    "login.txt": "cat:CALICOPASSWORD",
    "projects/app/data/meowgent.db": "THECHATS",
}
"""Files of a home folder that is the workspace, and the secret each holds."""


def home_with_secrets(home: Path) -> None:
    for name, secret in SECRETS.items():
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text(secret + "\n")
    (home / ".config" / "other.conf").write_text("fine to read")


@needs_sandbox
def test_renaming_a_parent_of_a_hidden_path_fails_and_no_secret_is_ever_read(outside_tmp: Path, user: Runner):
    home = outside_tmp / "home"
    home_with_secrets(home)
    user.own(outside_tmp)
    every_secret = " ".join(f"~/{name}" for name in SECRETS)
    commands = [
        "mv ~/.config ~/.c2; mv ~/projects ~/p2; mv ~/projects/app ~/projects/a2; mv ~/keys ~/k2; mv ~/.cache ~/c2",
        f"cat {every_secret}; cat ~/.c2/gh/hosts.yml ~/k2/openai.txt ~/p2/app/data/meowgent.db; cat ~/.config/*",
        "cp -r ~/.config ~/copied; grep -r . ~ 2>/dev/null | grep -v '^/proc'",
        "touch ~/made && echo wrote",
    ]
    _, renamed, read, copied, wrote = run_commands(
        user,
        commands,
        env={"HOME": str(home)},
        workspace=home,
        data_dir=home / "projects/app/data",
        auth_file=home / "login.txt",
        openai_key_file=home / "keys/openai.txt",
    )
    assert renamed.count(BUSY) == 5, renamed
    for result in (read, copied):
        assert not [secret for secret in SECRETS.values() if secret in result], result
    assert "fine to read" in read
    assert wrote.endswith("wrote")
    assert all((home / name).read_text() == secret + "\n" for name, secret in SECRETS.items())


def test_the_key_file_named_by_flag_is_hidden(tmp_path: Path):
    from meowgent.flags import parse_settings
    from meowgent.tools.sandbox import policy_for

    (tmp_path / "key").write_text("sk-1\n")
    settings = parse_settings(["--workspace", str(tmp_path), "--openai-key-file", str(tmp_path / "key")], {})
    assert (tmp_path / "key").resolve() in policy_for(settings).hidden


FOLDERS = st.lists(st.sampled_from(["a", "b", ".config", "gh"]), min_size=1, max_size=4)


@given(inside=FOLDERS, secret_is_file=st.booleans())
def test_every_folder_between_the_workspace_and_a_hidden_path_is_a_mount_point(inside: list[str], secret_is_file: bool):
    """Each is bound onto itself after the workspace's writable bind, so it can't be renamed; the hidden path is
    still covered last."""
    workspace = Path("/home/cat")
    hidden = workspace.joinpath(*inside)
    policy = SandboxPolicy(workspace)
    found = (), (hidden,)
    view = HostView(found[not secret_is_file], found[secret_is_file], pinned=pinned_between(workspace, [hidden]))
    options = bwrap_options(policy, view, disable_userns=True)
    between = [hidden.parents[index] for index in range(len(inside) - 1)]
    workspace_bind = options.index(str(workspace))
    for folder in between:
        at = options.index(str(folder))
        assert options[at - 1 : at + 2] == ["--bind", str(folder), str(folder)]
        assert at > workspace_bind
    assert options.index(str(hidden)) > max((options.index(str(folder)) for folder in between), default=0)


@needs_sandbox
def test_a_secret_behind_a_link_stays_hidden_when_the_link_is_pointed_elsewhere(outside_tmp: Path, user: Runner):
    """A link planted where a credential did not exist yet, filled later through it, then pointed elsewhere."""
    home = outside_tmp / "home"
    (home / ".config").mkdir(parents=True)
    (home / "notes").mkdir()
    (home / "notes" / "hosts.yml").write_text("gho_GITHUBTOKEN\n")  # written by the person's gh, through the link
    (home / ".config" / "gh").symlink_to(home / "notes")
    user.own(outside_tmp)
    commands = [
        "cat ~/notes/hosts.yml; mkdir ~/empty && ln -s ~/empty ~/.config/gh.new && mv -T ~/.config/gh.new ~/.config/gh",
        "cat ~/notes/hosts.yml ~/.config/gh/hosts.yml",
    ]
    _, first, second = run_commands(user, commands, env={"HOME": str(home)}, workspace=home)
    assert "No such file or directory" in first
    assert (home / ".config" / "gh").resolve() == home / "empty"
    assert "gho_GITHUBTOKEN" not in first + second
