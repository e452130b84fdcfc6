"""Settings from flags and variables (meowgent.flags); the login can stay out of the process list."""

import dataclasses
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from meowgent.config import Settings
from meowgent.flags import SETTINGS_GROUPS, parse_settings, settings_parser


def test_the_login_comes_from_a_flag_a_variable_or_a_file(tmp_path):
    login = tmp_path / "login"
    login.write_text("ann:s3cret:with:colons\n")
    assert parse_settings(["--auth", "bob:pw"], {}).auth == ("bob", "pw")
    assert parse_settings(["--auth-file", str(login)], {}).auth == ("ann", "s3cret:with:colons")
    assert parse_settings([], {"MEOWGENT_AUTH": "cat:meow"}).auth == ("cat", "meow")
    assert parse_settings([], {"MEOWGENT_AUTH_FILE": str(login)}).auth == ("ann", "s3cret:with:colons")
    assert parse_settings(["--auth", "bob:pw"], {"MEOWGENT_AUTH": "cat:meow"}).auth == ("bob", "pw")
    assert parse_settings([], {}).auth is None


@pytest.mark.parametrize("content", ["", "no-colon\n", ":nouser\n"])
def test_a_bad_login_file_is_a_plain_message(tmp_path, capsys, content):
    login = tmp_path / "login"
    login.write_text(content)
    with pytest.raises(SystemExit):
        parse_settings(["--auth-file", str(login)], {})
    assert "must be USER:PASSWORD" in capsys.readouterr().err


def test_a_missing_login_file_is_a_plain_message(tmp_path, capsys):
    with pytest.raises(SystemExit):
        parse_settings([], {"MEOWGENT_AUTH_FILE": str(tmp_path / "nope")})
    error = capsys.readouterr().err
    assert "cannot read the login file" in error
    assert "Traceback" not in error


def test_public_names_come_from_flags_or_a_list():
    assert parse_settings(["--public-name", "a.example", "--public-name", "B.example"], {}).public_names == (
        "a.example",
        "b.example",
    )
    assert parse_settings([], {"MEOWGENT_PUBLIC_NAMES": "a.example, b.example"}).public_names == (
        "a.example",
        "b.example",
    )


def test_the_read_timeout_comes_from_the_flag_or_the_variable():
    assert parse_settings([], {}).read_timeout == Settings().read_timeout
    assert parse_settings([], {"MEOWGENT_READ_TIMEOUT": "300"}).read_timeout == 300.0
    assert parse_settings(["--read-timeout", "7.5"], {"MEOWGENT_READ_TIMEOUT": "300"}).read_timeout == 7.5


def test_the_sandbox_is_on_unless_turned_off_by_flag_or_variable():
    assert parse_settings([], {}).sandbox is True
    assert parse_settings(["--no-sandbox"], {}).sandbox is False
    assert parse_settings([], {"MEOWGENT_SANDBOX": "off"}).sandbox is False
    assert parse_settings([], {"MEOWGENT_SANDBOX": "on"}).sandbox is True
    assert parse_settings(["--bwrap", "/opt/bwrap"], {}).bwrap == Path("/opt/bwrap")
    assert parse_settings([], {"MEOWGENT_BWRAP": "/opt/bwrap"}).bwrap == Path("/opt/bwrap")


def test_shell_variables_come_from_flags_and_a_list_and_never_name_meowgents_own():
    settings = parse_settings(["--shell-env", "GITHUB_TOKEN", "--shell-env", "CI"], {"MEOWGENT_SHELL_ENV": "A, CI"})
    assert settings.shell_env == ("A", "CI", "GITHUB_TOKEN")


@pytest.mark.parametrize(
    ("argv", "environ", "says"),
    [
        (["--shell-env", "MEOWGENT_AUTH"], {}, "commands never get MEOWGENT_* variables"),
        ([], {"MEOWGENT_SHELL_ENV": "meowgent_auth"}, "commands never get MEOWGENT_* variables"),
        (["--shell-env", "A=B"], {}, "is not the name of an environment variable"),
    ],
)
def test_a_bad_shell_variable_is_a_plain_message(capsys, argv, environ, says):
    with pytest.raises(SystemExit):
        parse_settings(argv, environ)
    assert says in capsys.readouterr().err


def test_the_login_files_path_is_kept_so_commands_cannot_read_it(tmp_path):
    login = tmp_path / "login"
    login.write_text("ann:pw\n")
    assert parse_settings(["--auth-file", str(login)], {}).auth_file == login
    assert parse_settings([], {"MEOWGENT_AUTH_FILE": str(login)}).auth_file == login
    assert parse_settings(["--auth", "a:b", "--auth-file", str(login)], {}).auth_file is None


def test_several_model_hosts_and_an_openai_key_that_never_shows(tmp_path):
    key_file = tmp_path / "key"
    key_file.write_text("sk-from-file\n")
    settings = parse_settings(
        ["--ollama-host", "http://a:11434", "--ollama-host", "http://b:11434", "--openai-key-file", str(key_file)],
        {"MEOWGENT_OPENAI_URLS": "http://gpu-box:8000/v1, http://other:8000/v1", "OLLAMA_HOST": "http://c:1"},
    )
    assert settings.ollama_hosts == ("http://a:11434", "http://b:11434")
    assert settings.ollama_host == "http://a:11434"
    assert settings.openai_urls == ("http://gpu-box:8000/v1", "http://other:8000/v1")
    assert settings.openai_key is not None
    assert settings.openai_key.reveal() == "sk-from-file"
    assert "sk-from-file" not in repr(settings)
    assert "sk-from-file" not in str(dataclasses.asdict(settings))


def test_ollama_host_alone_still_chooses_the_one_server():
    settings = parse_settings([], {"OLLAMA_HOST": "http://c:1", "MEOWGENT_OPENAI_API_KEY": "sk-env"})
    assert settings.ollama_host == "http://c:1"
    assert settings.ollama_hosts == ()
    assert settings.openai_key is not None
    assert settings.openai_key.reveal() == "sk-env"


def test_the_default_workspace_is_a_folder_of_its_own_not_the_folder_meowgent_runs_in(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(Path(__file__).parent)
    assert parse_settings([], {}).workspace == tmp_path / "meowgent-workspace"
    assert Settings().workspace == tmp_path / "meowgent-workspace"
    assert parse_settings([], {"MEOWGENT_WORKSPACE": str(tmp_path)}).workspace == tmp_path


def test_the_key_file_is_remembered_so_the_sandbox_can_hide_it(tmp_path):
    (tmp_path / "key").write_text("sk-secret\n")
    settings = parse_settings(["--openai-key-file", str(tmp_path / "key")], {})
    assert settings.openai_key_file == (tmp_path / "key").resolve()
    assert settings.secret_files == (settings.openai_key_file,)


def test_each_setting_is_read_by_one_group_of_flags():
    """A field read by two groups would be decided by whichever comes last in the table, silently."""
    args = settings_parser({}).parse_args([])
    names = [name for group in SETTINGS_GROUPS for name in group.read(args, {})]
    assert len(names) == len(set(names)), names
    assert set(names) <= {field.name for field in dataclasses.fields(Settings)}
    assert {"workspace", "auth", "sandbox", "ollama_host", "mcp_config", "token"} <= set(names)


def test_the_files_caps_come_from_flags_or_variables_in_megabytes_and_counts():
    defaults = parse_settings([], {})
    assert (defaults.upload_max_bytes, defaults.upload_max_files) == (Settings().upload_max_bytes, 50)
    settings = parse_settings(
        ["--max-upload-mb", "0.5", "--max-uploads", "3", "--max-zip-mb", "2000"],
        {"MEOWGENT_MAX_CHECKPOINTS_MB": "1", "MEOWGENT_MAX_UPLOAD_MB": "7"},
    )
    assert settings.upload_max_bytes == 500_000  # the flag wins over the variable
    assert settings.upload_max_files == 3
    assert settings.zip_max_bytes == 2_000_000_000
    assert settings.checkpoint_max_bytes == 1_000_000
    assert parse_settings([], {"MEOWGENT_MAX_UPLOADS": "9"}).upload_max_files == 9


@pytest.mark.parametrize(
    ("argv", "environ", "says"),
    [
        (["--max-upload-mb", "lots"], {}, "--max-upload-mb must be a number of megabytes above 0"),
        (["--max-zip-mb", "0"], {}, "--max-zip-mb must be a number of megabytes above 0"),
        (["--max-checkpoints-mb", "-5"], {}, "--max-checkpoints-mb must be a number of megabytes above 0"),
        (["--max-checkpoints-mb", "nan"], {}, "--max-checkpoints-mb must be a number of megabytes above 0"),
        (["--max-zip-mb", "inf"], {}, "--max-zip-mb must be a number of megabytes above 0"),
        (["--max-uploads", "2.5"], {}, "--max-uploads must be a whole number above 0, not '2.5'"),
        ([], {"MEOWGENT_MAX_UPLOADS": "0"}, "MEOWGENT_MAX_UPLOADS must be a whole number above 0"),
        (
            [],
            {"MEOWGENT_MAX_ZIP_MB": ""},
            "MEOWGENT_MAX_ZIP_MB must be a number of megabytes above 0, such as 100 or 0.5, not ''",
        ),
    ],
)
def test_a_bad_cap_is_a_plain_message_naming_its_flag_or_variable(capsys, argv, environ, says):
    with pytest.raises(SystemExit):
        parse_settings(argv, environ)
    error = capsys.readouterr().err
    assert says in error
    assert "Traceback" not in error


@given(megabytes=st.floats(min_value=0.001, max_value=1e9, allow_nan=False))
def test_any_positive_number_of_megabytes_is_that_many_bytes(megabytes):
    settings = parse_settings(["--max-zip-mb", repr(megabytes)], {})
    assert settings.zip_max_bytes == int(megabytes * 1_000_000)
    assert settings.zip_max_bytes >= 1
