"""The page's examples, one list per language, in the chatbot's format."""

from meowgent.ui.i18n import CHINESE, LANGUAGES
from meowgent.ui.page import EXAMPLES, examples_for


def test_every_language_has_examples_in_the_chatbot_format():
    assert set(EXAMPLES) == set(LANGUAGES)
    assert examples_for(CHINESE)[0] == {"text": EXAMPLES[CHINESE][0]}
