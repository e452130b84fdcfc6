"""The approval card as a person sees it, on a laptop and on a phone, in both languages: in view the moment it
appears, with every call and a long file shown once, and its edit form changing the call itself.

Split from test_layout.py (same fixtures and helpers) so the two halves run on two workers.
"""

import re

import pytest
from playwright.sync_api import Page, expect

from meowgent.ui.i18n import CHINESE, ENGLISH, t
from tests.scripted_ollama import Text, Turn, reply, tool_call_text
from tests.ui.conftest import SCREENS, in_view, page_scroll

# The fixtures `screen`, `language` and `page` too.
from tests.ui.test_layout import language, open_page, page, screen, send  # noqa: F401

pytestmark = pytest.mark.browser


LONG = "\n".join(f"line {i:03d}: cats sleep sixteen hours a day" for i in range(200))
LAST_LINE = "line 199: cats sleep sixteen hours a day"


def wait_for_card(page: Page) -> None:  # noqa: F811  (the fixtures imported above)
    expect(page.locator("#approve")).to_be_visible()
    expect(page.locator("#card_text")).to_contain_text(re.compile(r"\S"))  # the card's words came with its buttons


# A phone is where a card can push the buttons off the screen, in either language's words; a laptop's room is the
# same for both, so one language covers it.
@pytest.mark.parametrize(("screen", "language"), [("laptop", ENGLISH), ("phone", ENGLISH), ("phone", CHINESE)])
def test_the_card_is_in_view_the_moment_it_appears_and_shows_a_long_file_once(running_app, page, language):  # noqa: F811  (the fixtures imported above)
    running_app.ollama.script(
        reply("\n\n".join(f"Paragraph {i}: a long answer that fills the chat." for i in range(40))),
        Turn(Text("I'll write it.\n"), Text(tool_call_text("write_file", {"path": "notes.md", "content": LONG}))),
    )
    open_page(page, running_app, language)
    send(page, "tell me a lot")
    expect(page.locator("#chat")).to_contain_text("Paragraph 39")
    send(page, "now write my notes")
    wait_for_card(page)

    # Both decisions are on screen, uncovered, and nothing had to be scrolled to get there.
    for button in ("#approve", "#reject", "#approve_chat", "#msg textarea"):
        assert in_view(page.locator(button)), f"{button} is not wholly in view"
    assert page_scroll(page) == 0
    expect(page.locator("#approval")).to_contain_text(t(language, "card_one").lstrip("# "))

    # The file shows once, whole, in a box that scrolls inside; the chat points at the card instead.
    details = page.locator("#card_details textarea")
    expect(details).to_have_value(LONG)
    assert details.evaluate("box => box.scrollHeight > box.clientHeight + 100"), "the content box does not scroll"
    expect(page.locator("#chat")).to_contain_text(t(language, "see_card"))
    expect(page.locator("#chat")).not_to_contain_text(LAST_LINE)

    page.locator("#approve").click()
    expect(page.locator("#approve")).to_be_hidden()
    assert (running_app.workspace / "notes.md").read_text() == LONG


def test_approve_all_is_in_view_with_five_calls_waiting(running_app, page):  # noqa: F811  (the fixtures imported above)
    commands = [f"echo step-{n} >> steps.txt" for n in range(1, 6)]
    running_app.ollama.script(
        Text("".join(tool_call_text("run_shell", {"command": command}) for command in commands)), reply("All done.")
    )
    open_page(page, running_app)
    send(page, "do five steps")
    wait_for_card(page)
    for button in ("#approve_all", "#approve", "#reject"):
        assert in_view(page.locator(button)), f"{button} is not wholly in view"
    assert page_scroll(page) == 0
    page.locator("#approve_all").click()
    expect(page.locator("#chat")).to_contain_text("All done.")
    assert (running_app.workspace / "steps.txt").read_text().split() == [f"step-{n}" for n in range(1, 6)]


def test_a_megabyte_file_reaches_the_page_once(running_app, chromium):
    content = "".join(f"{i:07d} meow meow meow meow meow meow meow meow\n" for i in range(20_000))  # 1 MB
    running_app.ollama.script(Text(tool_call_text("write_file", {"path": "big.md", "content": content})))
    context = chromium.new_context(**SCREENS["laptop"])
    laptop = context.new_page()
    open_page(laptop, running_app)
    received = []
    network = context.new_cdp_session(laptop)
    network.on("Network.dataReceived", lambda event: received.append(event["dataLength"]))
    network.send("Network.enable")
    send(laptop, "write a big file")
    expect(laptop.locator("#card_details textarea")).to_have_value(content)
    shown = laptop.evaluate(
        "() => [...document.querySelectorAll('textarea, input')].reduce((n, box) => n + box.value.length, 0)"
        " + document.body.innerText.length"
    )
    bytes_received = sum(received)
    # Once in the card (and a few KB of the stream's tail); a second copy would double these.
    assert len(content) < shown < 1.3 * len(content)
    assert len(content) < bytes_received < 1.5 * len(content), f"{bytes_received:,} bytes for a {len(content):,} file"


EDIT_CASES = {
    "write_file": ({"path": "notes.md", "content": "old text"}, {"path": "renamed.md", "main": "new text"}),
    "edit_file": ({"path": "pets.md", "old": "cat=1", "new": "cat=2"}, {"old": "dog=1", "main": "dog=3"}),
    "run_shell": ({"command": "echo proposed > out.txt"}, {"main": "echo changed > out.txt"}),
}


FIELD_LABELS = {
    "write_file": {"path": "field_path", "main": "field_content"},
    "edit_file": {"path": "field_path", "old": "field_old", "main": "field_new"},
    "run_shell": {"main": "field_command"},
}


MAIN_ARGUMENT = {"write_file": "content", "edit_file": "new", "run_shell": "command"}


RESULTS = {
    "write_file": ("renamed.md", "new text"),
    "edit_file": ("pets.md", "cat=1\ndog=3\n"),
    "run_shell": ("out.txt", "changed\n"),
}


EDIT_SCREENS = [
    ("write_file", "laptop", ENGLISH),
    ("write_file", "phone", CHINESE),
    ("edit_file", "laptop", CHINESE),
    ("edit_file", "phone", ENGLISH),
    ("run_shell", "laptop", ENGLISH),
    ("run_shell", "phone", CHINESE),
]
"""Every pair of values of two axes, once: each tool's form on both screens and in both languages, and each screen in
both languages. The tool decides the fields, the language their labels, the screen whether Approve stays in view;
no behaviour needs all three at once, so the full product (12 page loads) would repeat these pairs."""


@pytest.mark.parametrize(("tool", "screen", "language"), EDIT_SCREENS)
def test_change_it_before_approving_edits_the_fields_themselves(running_app, page, language, tool):  # noqa: F811  (the fixtures imported above)
    proposed, changes = EDIT_CASES[tool]
    (running_app.workspace / "pets.md").write_text("cat=1\ndog=1\n")
    running_app.ollama.script(Text(tool_call_text(tool, proposed)), reply("Done as you changed it."))
    open_page(page, running_app, language)
    send(page, "please do it")
    wait_for_card(page)
    page.locator("#edit").get_by_text(t(language, "edit_before")).click()

    fields = {"path": page.locator("#edit_path"), "old": page.locator("#edit_old"), "main": page.locator("#edit_args")}
    labels = FIELD_LABELS[tool]
    argument_of = {"path": "path", "old": "old", "main": MAIN_ARGUMENT[tool]}
    for slot, field in fields.items():
        if slot not in labels:
            expect(field).to_be_hidden()
            continue
        expect(field).to_contain_text(t(language, labels[slot]))
        box = field.locator("textarea")
        expect(box).to_have_value(proposed[argument_of[slot]])
        if slot in changes:
            box.fill(changes[slot])
    assert "{" not in page.locator("#edit_args textarea").input_value()  # plain fields, not JSON
    edit = page.locator("#edit").get_by_text(t(language, "edit_before"))
    edit.click()
    edit.click()  # closed and opened again: the changes are still there
    expect(page.locator("#edit_args textarea")).to_have_value(changes["main"])
    for button in ("#approve", "#reject"):
        assert in_view(page.locator(button)), f"{button} left the screen when the fields opened"

    page.locator("#approve").click()
    expect(page.locator("#chat")).to_contain_text("Done as you changed it.")
    name, content = RESULTS[tool]
    assert (running_app.workspace / name).read_text() == content
    assert not (running_app.workspace / "notes.md").exists()
