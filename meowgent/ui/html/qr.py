"""A watch link as a QR code people in the room can scan: an SVG with no script and no outside reference."""

from __future__ import annotations

import io

import segno


def qr_svg(url: str, *, scale: int = 4) -> str:
    """`url` as a QR code in SVG (medium error correction, the standard quiet zone), ready to put in a page."""
    code = segno.make(url, error="m", micro=False)
    out = io.BytesIO()
    code.save(out, kind="svg", scale=scale, border=4, xmldecl=False, dark="#000", light="#fff", svgclass="mg-qr")
    return out.getvalue().decode()
