"""qr_svg: a plain SVG whose modules are exactly the QR code of the URL."""

import re
import xml.etree.ElementTree as ET

import segno
from hypothesis import given, settings
from hypothesis import strategies as st

from meowgent.ui.html.qr import qr_svg

SVG = "{http://www.w3.org/2000/svg}"


def modules(svg: str, border: int = 4) -> set[tuple[int, int]]:
    """The dark modules an SVG of segno's draws: its stroked path (in module units), read as runs along rows."""
    path = next(p for p in ET.fromstring(svg).iter(f"{SVG}path") if p.get("stroke"))
    dark, x, y = set(), 0.0, 0.0
    for command, numbers in re.findall(r"([MmHh])([-\d. ]+)", path.get("d")):
        values = [float(n) for n in numbers.split()]
        if command == "M":
            x, y = values
        elif command == "m":
            x, y = x + values[0], y + values[1]
        else:
            end = values[0] if command == "H" else x + values[0]
            dark |= {(int(y) - border, int(column) - border) for column in range(int(x), int(end))}
            x = end
    return dark


@settings(deadline=None, max_examples=25)  # segno takes tens of milliseconds a code
@given(
    path=st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_", min_size=43, max_size=43)
)
def test_the_svg_draws_the_code_of_the_link_and_nothing_else(path):
    url = f"https://demo.example.org/watch/{path}"
    svg = qr_svg(url)
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    for element in root.iter():
        assert element.tag in (f"{SVG}svg", f"{SVG}g", f"{SVG}path"), element.tag
        assert not any("href" in name or name.startswith("on") for name in element.attrib)
    assert "<script" not in svg
    assert "http" not in svg.replace("http://www.w3.org/2000/svg", "")
    expected = segno.make(url, error="m", micro=False)
    drawn = {(r, c) for r, row in enumerate(expected.matrix) for c, bit in enumerate(row) if bit}
    assert modules(svg) == drawn
