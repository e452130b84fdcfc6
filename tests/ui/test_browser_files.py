"""The Files panel in headless Chromium: the tree, previews, downloads, uploads and Undo, against the real app."""

import zipfile
from pathlib import Path

import pytest

from tests.ui.conftest import CHROMIUM, SCREENS, in_view, open_app, reload_app, send, wait_for_event_end

if not CHROMIUM.exists():
    pytest.skip(f"browser tests need Chromium at {CHROMIUM} (apt-get install chromium)", allow_module_level=True)

from playwright.sync_api import Browser, Page, expect

from tests.scripted_ollama import Text, Turn, reply, tool_call_text

pytestmark = pytest.mark.browser


@pytest.fixture
def page(chromium: Browser) -> Page:
    return chromium.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True).new_page()


def open_files(page: Page) -> None:
    page.locator("#files").get_by_text("Your files").first.click()
    expect(page.locator("#file_list")).to_be_visible()


def approved_write(page: Page, running_app, text: str, *calls: tuple[str, dict]) -> None:
    """The person asks; the model makes each call in turn, and the person approves each."""
    turns = [Turn(Text(tool_call_text(name, arguments))) for name, arguments in calls]
    running_app.ollama.script(*turns, reply("Done."))
    send(page, text)
    for _, arguments in calls:
        expect(page.locator("#card_text")).to_contain_text(arguments["path"])
        # The next call's card comes from the previous Approve's event, before that event ends.
        wait_for_event_end(page, "#reason")
        page.locator("#approve").click()
    expect(page.locator("#chat")).to_contain_text("Done.")


def call_row(page: Page, path: str):
    """The row of the call that wrote `path`: the title a person sees without opening its folded panel."""
    return page.locator("#chat .title", has_text=path).first


def undo_in_chat(page: Page, path: str) -> None:
    """Press the Undo on the row of the call that wrote `path`, with its panel left folded."""
    button = call_row(page, path).locator("button.undo")
    expect(button).to_be_visible()
    button.click()


def pick(page: Page, label: str) -> None:
    page.locator("#file_list").get_by_text(label).first.click()


def upload(page: Page, name: str, data: bytes) -> None:
    page.locator("#upload input[type=file]").set_input_files(
        files=[{"name": name, "mimeType": "application/octet-stream", "buffer": data}]
    )


def test_a_file_the_agent_wrote_appears_previews_and_downloads_with_the_same_bytes(running_app, page):
    poem = "Soft paws at dawn,\nA purr beside the window,\n<b>not bold</b>\n"
    open_app(page, running_app.url)
    approved_write(page, running_app, "a poem to poem.txt", ("write_file", {"path": "poem.txt", "content": poem}))
    open_files(page)
    expect(page.locator("#file_list")).to_contain_text("poem.txt")
    expect(page.locator("#file_list")).to_contain_text("+3 −0")  # this chat made it: marked new, +3
    pick(page, "poem.txt")
    preview = page.locator("#file_preview")
    expect(preview).to_contain_text("A purr beside the window")
    expect(preview).to_contain_text("<b>not bold</b>")  # shown as text, never as markup
    with page.expect_download() as downloading:
        page.locator("#file_download").click()
    assert Path(downloading.value.path()).read_bytes() == (running_app.workspace / "poem.txt").read_bytes()
    with page.expect_download() as zipping:
        page.locator("#download_all").click()
    with zipfile.ZipFile(zipping.value.path()) as archive:
        assert archive.read("poem.txt") == (running_app.workspace / "poem.txt").read_bytes()


def test_an_uploaded_file_is_told_to_the_model_and_read_through_read_file(running_app, page):
    open_app(page, running_app.url)
    running_app.ollama.script(reply("Hello!"))  # before sending: the answer may be asked for at once
    send(page, "hello")
    expect(page.locator("#chat")).to_contain_text("Hello!")
    open_files(page)
    upload(page, "notes.txt", b"the secret word is catnip\n")
    expect(page.locator("#files_note")).to_contain_text("Added notes.txt")
    expect(page.locator("#file_list")).to_contain_text("notes.txt")
    running_app.ollama.script(Turn(Text(tool_call_text("read_file", {"path": "notes.txt"}))), reply("It says catnip."))
    send(page, "what does my file say?")
    expect(page.locator("#chat")).to_contain_text("It says catnip.")
    first, second = running_app.ollama.chat_requests[-2:]
    told = [message["content"] for message in first["messages"] if message["role"] == "user"]
    assert any("The person added notes.txt (26 bytes) to the workspace." in text for text in told)
    assert "the secret word is catnip" in second["messages"][-1]["content"]
    assert (running_app.workspace / "notes.txt").read_bytes() == b"the secret word is catnip\n"


def test_an_upload_named_out_of_the_folder_or_through_a_link_is_refused_with_a_sentence(running_app, page, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (running_app.workspace / "door").symlink_to(outside)
    open_app(page, running_app.url)
    open_files(page)
    upload(page, "../x", b"escape")
    expect(page.locator("#files_note")).to_contain_text("would leave the folder")
    upload(page, "door/x", b"escape")
    expect(page.locator("#files_note")).to_contain_text("reached through a link")
    assert not (tmp_path / "x").exists()
    assert not (outside / "x").exists()


def test_replacing_an_existing_file_asks_first(running_app, page):
    (running_app.workspace / "report.txt").write_bytes(b"old")
    open_app(page, running_app.url)
    open_files(page)
    upload(page, "report.txt", b"new")
    expect(page.locator("#replace_question")).to_contain_text("report.txt is already in the workspace. Replace it?")
    assert (running_app.workspace / "report.txt").read_bytes() == b"old"
    page.locator("#replace_yes").click()
    expect(page.locator("#files_note")).to_contain_text("Added report.txt")
    assert (running_app.workspace / "report.txt").read_bytes() == b"new"


def test_undo_in_the_chat_restores_an_edited_file_exactly_and_removes_a_created_one(running_app, page):
    original = "line one\r\nline two\r\n\tno newline at the end"
    (running_app.workspace / "edited.txt").write_text(original, newline="")
    open_app(page, running_app.url)
    approved_write(
        page,
        running_app,
        "change things",
        ("edit_file", {"path": "edited.txt", "old": "line two", "new": "LINE 2"}),
        ("write_file", {"path": "created.txt", "content": "brand new"}),
    )
    assert (running_app.workspace / "created.txt").exists()
    call_row(page, "edited.txt").get_by_text("edited.txt").click()  # open the edit's panel: its diff shows once
    expect(page.locator("#chat pre.mg-diff")).to_have_count(1)
    expect(page.locator("#chat")).to_contain_text("Edited edited.txt at line 2.")
    assert page.locator("#chat").inner_text().count("+LINE 2") == 1
    open_files(page)  # the Undo's event shows its end there (its first output is the file list)
    undo_in_chat(page, "edited.txt")
    expect(page.locator(".toast-body").first).to_contain_text("edited.txt is back as it was before the change.")
    expect(page.locator("#files_note")).to_contain_text("edited.txt is back as it was before the change.")
    assert (running_app.workspace / "edited.txt").read_bytes() == original.encode()
    wait_for_event_end(page, "#file_list")  # the toast comes before the end, and a second Undo till then is dropped
    undo_in_chat(page, "created.txt")
    expect(page.locator(".toast-body").last).to_contain_text("created.txt was removed")
    assert not (running_app.workspace / "created.txt").exists()
    # Each row says what happened instead of offering an Undo that could only say it is done already, after a
    # reload too (the rows are drawn from the undo's record).
    for path in ("edited.txt", "created.txt"):
        expect(call_row(page, path)).to_contain_text("↩ Undone")
        expect(call_row(page, path).locator("button.undo")).to_have_count(0)
    reload_app(page)
    expect(call_row(page, "created.txt")).to_contain_text("↩ Undone")
    expect(page.locator("#chat button.undo")).to_have_count(0)


def test_a_file_changed_since_shows_the_diff_and_asks(running_app, page):
    open_app(page, running_app.url)
    approved_write(page, running_app, "write it", ("write_file", {"path": "a.txt", "content": "agent\n"}))
    (running_app.workspace / "a.txt").write_text("agent\nmine too\n")
    undo_in_chat(page, "a.txt")
    question = page.locator("#undo_question").first
    expect(question).to_be_visible()
    expect(question).to_contain_text("a.txt changed after the agent wrote it")
    expect(question).to_contain_text("mine too")
    assert (running_app.workspace / "a.txt").read_text() == "agent\nmine too\n"
    page.locator("#undo_anyway").click()
    expect(question).to_be_hidden()
    assert not (running_app.workspace / "a.txt").exists()


def test_undo_everything_since_a_message_restores_three_files(running_app, page):
    workspace = running_app.workspace
    for name in ("one.txt", "two.txt"):
        (workspace / name).write_text(f"{name} as it was\n")
    before = {path.name: path.read_bytes() for path in workspace.iterdir()}
    open_app(page, running_app.url)
    approved_write(
        page,
        running_app,
        "first round",
        ("write_file", {"path": "one.txt", "content": "changed\n"}),
        ("edit_file", {"path": "two.txt", "old": "as it was", "new": "edited"}),
    )
    approved_write(page, running_app, "second round", ("write_file", {"path": "three.txt", "content": "new\n"}))
    open_files(page)
    since = page.locator("#undo_since_pick input")
    expect(since).to_have_value("second round")  # the lists' refresh after the answer has come
    since.click()
    page.get_by_role("option", name="first round").click()
    # A refresh keeps the person's pick (it used to put the newest round back, and Undo then undid less): once the
    # refresh shows a file written meanwhile, the pick is still there.
    (workspace / "mine.txt").write_text("mine\n")
    page.locator("#files_refresh").click()
    expect(page.locator("#file_list")).to_contain_text("mine.txt")
    expect(since).to_have_value("first round")
    page.locator("#undo_since").click()
    expect(page.locator("#files_note")).to_contain_text("three.txt was removed")
    assert {path.name: path.read_bytes() for path in workspace.iterdir()} == before | {"mine.txt": b"mine\n"}
    expect(since).to_have_value("")  # nothing left to undo since a message


def test_the_panels_undo_buttons_undo_the_newest_round_and_change_without_a_pick_and_say_when_there_is_none(
    running_app, page
):
    workspace = running_app.workspace
    (workspace / "two.txt").write_text("as it was\n")
    open_app(page, running_app.url)
    open_files(page)
    page.locator("#undo_change").click()
    expect(page.locator("#files_note")).to_contain_text("The agent hasn't changed any file in this chat yet.")
    approved_write(page, running_app, "first round", ("edit_file", {"path": "two.txt", "old": "was", "new": "is"}))
    approved_write(page, running_app, "second round", ("write_file", {"path": "three.txt", "content": "new\n"}))
    expect(page.locator("#file_changes input")).to_have_value("three.txt")
    expect(page.locator("#undo_since_pick input")).to_have_value("second round")
    page.locator("#undo_since").click()
    expect(page.locator("#files_note")).to_contain_text("three.txt was removed")
    assert not (workspace / "three.txt").exists()
    assert (workspace / "two.txt").read_text() == "as it is\n"  # the first round stays
    expect(page.locator("#file_changes input")).to_have_value("two.txt")  # the newest change not undone yet
    page.locator("#undo_change").click()
    expect(page.locator("#files_note")).to_contain_text("two.txt is back as it was before the change.")
    assert (workspace / "two.txt").read_text() == "as it was\n"
    page.locator("#undo_since").click()  # nothing left to pick
    expect(page.locator("#files_note")).to_contain_text("Every change the agent made in this chat is undone already.")


def test_the_panel_is_in_reach_on_a_phone(running_app, chromium):
    (running_app.workspace / "list.txt").write_text("milk\n")
    context = chromium.new_context(**SCREENS["phone"])
    phone = context.new_page()
    open_app(phone, running_app.url)
    phone.locator("#menu").click()
    open_files(phone)
    phone.locator("#file_list").get_by_text("list.txt").first.tap()
    expect(phone.locator("#file_preview")).to_contain_text("milk")
    assert in_view(phone.locator("#file_preview").first)
