from meowgent.config import Settings, parse_settings


def test_the_read_timeout_comes_from_the_flag_or_the_variable():
    assert parse_settings([], {}).read_timeout == Settings().read_timeout
    assert parse_settings([], {"MEOWGENT_READ_TIMEOUT": "300"}).read_timeout == 300.0
    assert parse_settings(["--read-timeout", "7.5"], {"MEOWGENT_READ_TIMEOUT": "300"}).read_timeout == 7.5
