import base64
import html
import os

import pytest

from meowgent.files.access import preview_file, read_chunks
from meowgent.files.errors import FileRefused
from meowgent.files.preview import Binary, Image, MarkdownText, TextPage, image_type, text_page
from meowgent.tools.workspace import Workspace
from meowgent.ui.html.filepreview import preview_html

PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 20


def test_text_comes_in_numbered_pages_and_counts_every_line():
    lines = [f"line {n}\n".encode() for n in range(1, 1_206)]
    page = text_page("a.txt", iter(lines), page=3, page_size=500)
    assert (page.page, page.pages, page.total_lines) == (3, 3, 1_205)
    assert page.lines[0] == (1_001, "line 1001")
    assert page.lines[-1] == (1_205, "line 1205")
    assert text_page("a.txt", iter(lines), page=9, page_size=500).lines == ()


@pytest.mark.parametrize(
    ("head", "mime"),
    [(PNG, "image/png"), (b"\xff\xd8\xff\xe0", "image/jpeg"), (b"GIF89a..", "image/gif"),
     (b"RIFF\0\0\0\0WEBPVP8 ", "image/webp"), (b"<svg>", None), (b"hello", None)],
)  # fmt: skip
def test_images_are_known_by_their_bytes(head, mime):
    assert image_type(head) == mime


def test_a_file_is_previewed_by_its_bytes_not_its_name(tmp_path):
    (tmp_path / "photo.txt").write_bytes(PNG)
    (tmp_path / "data.png").write_bytes(b"\0\1\2" * 1000)
    (tmp_path / "notes.md").write_text("# Title\n![x](http://evil/x.png)\n")
    (tmp_path / "long.txt").write_text("x" * 10_000 + "\nsecond\n")
    workspace = Workspace(tmp_path)
    assert isinstance(preview_file(workspace, "photo.txt"), Image)
    assert preview_file(workspace, "data.png") == Binary("data.png", 3000)
    assert isinstance(preview_file(workspace, "notes.md"), MarkdownText)
    long = preview_file(workspace, "long.txt")
    assert isinstance(long, TextPage)
    assert long.cut
    assert long.lines[1] == (2, "second")


def test_the_preview_html_escapes_and_loads_nothing():
    markdown = preview_html(MarkdownText("a.md", "# Hi\n<script>x</script> ![p](http://evil/p.png)"), language="en")
    assert "<script" not in markdown
    assert "<img" not in markdown
    assert "<h1>" in markdown
    text = preview_html(TextPage("a", ((1, "<b>&"),), 1, 1, 1), language="en")
    assert "<b>" not in text
    assert "Lines 1–1 of 1" in text
    image = preview_html(Image("p.png", "image/png", PNG), language="zh-TW")
    assert f'src="data:image/png;base64,{base64.b64encode(PNG).decode()}"' in html.unescape(image)
    assert "http" not in html.unescape(image)
    assert "2.1 MB" in html.unescape(preview_html(Binary("b", 2_100_000), language="en"))
    assert "二進位檔案" in preview_html(Binary("b", 2_100_000), language="zh-TW")


def test_a_download_has_the_same_bytes_and_refuses_links_out(tmp_path):
    data = os.urandom(3_000_000)
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "blob.bin").write_bytes(data)
    (tmp_path / "secret").write_text("secret")
    (tmp_path / "ws" / "link").symlink_to(tmp_path / "secret")
    workspace = Workspace(tmp_path / "ws")
    assert b"".join(read_chunks(workspace, "blob.bin")) == data
    with pytest.raises(FileRefused) as caught:
        b"".join(read_chunks(workspace, "link"))
    assert caught.value.kind == "unsafe_path"
