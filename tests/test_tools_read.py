from __future__ import annotations

import pytest

from agentcli.tools.base import ToolError
from tests.test_tools_support import call, make_ctx


def test_read_numbers_lines_and_records_the_read(tmp_path):
    ctx, asker = make_ctx(tmp_path)
    f = ctx.directory / "a.py"
    f.write_text("one\ntwo\r\nthree\n")
    res = call(ctx, "read", {"filePath": "a.py"})
    assert res.output.startswith(f"<path>{f}</path>\n<type>file</type>\n<content>\n")
    assert "1: one\n2: two\n3: three\n" in res.output
    assert "(End of file - total 3 lines)" in res.output
    assert res.title == "a.py"
    assert ctx.file_times.last_read(f) == f.stat().st_mtime
    assert asker.asked == []  # reading asks nobody


def test_offset_is_1_based_and_note_says_how_to_continue(tmp_path):
    ctx, _ = make_ctx(tmp_path)
    (ctx.directory / "n.txt").write_text("".join(f"line{i}\n" for i in range(1, 11)))
    res = call(ctx, "read", {"filePath": "n.txt", "offset": 3, "limit": 2})
    assert "3: line3\n4: line4\n" in res.output
    assert "2: line2" not in res.output and "5: line5" not in res.output
    assert "(Showing lines 3-4 of 10. Use offset=5 to continue.)" in res.output
    assert res.metadata["truncated"] is True


def test_offset_errors(tmp_path):
    ctx, _ = make_ctx(tmp_path)
    (ctx.directory / "n.txt").write_text("a\nb\n")
    with pytest.raises(ToolError, match="out of range for this file \\(2 lines\\)"):
        call(ctx, "read", {"filePath": "n.txt", "offset": 5})
    with pytest.raises(ToolError, match="offset must be greater than or equal to 1"):
        call(ctx, "read", {"filePath": "n.txt", "offset": 0})


def test_default_limit_long_lines_and_byte_cap(tmp_path):
    ctx, _ = make_ctx(tmp_path)
    big = ctx.directory / "big.txt"
    big.write_text("".join(f"{i}\n" for i in range(1, 5001)))
    res = call(ctx, "read", {"filePath": str(big)})
    assert "2000: 2000\n" in res.output and "2001: 2001" not in res.output
    assert "(Showing lines 1-2000 of 5000. Use offset=2001 to continue.)" in res.output

    wide = ctx.directory / "wide.txt"
    wide.write_text("x" * 5000 + "\nshort\n")
    res = call(ctx, "read", {"filePath": str(wide)})
    assert "1: " + "x" * 2000 + "... (line truncated to 2000 chars)\n2: short" in res.output

    huge = ctx.directory / "huge.txt"  # 100 lines of 1 KB: the 50 KB cap stops the page first
    huge.write_text(("y" * 1000 + "\n") * 100)
    res = call(ctx, "read", {"filePath": str(huge)})
    assert "(Output capped at 50 KB. Showing lines 1-51. Use offset=52 to continue.)" in res.output
    assert len(res.output.encode()) < 55 * 1024


def test_missing_file_suggests_close_names(tmp_path):
    ctx, _ = make_ctx(tmp_path)
    (ctx.directory / "config.yaml").write_text("x")
    with pytest.raises(ToolError) as err:
        call(ctx, "read", {"filePath": "config.yml"})
    msg = str(err.value)
    assert msg.startswith(f"File not found: {ctx.directory / 'config.yml'}")
    assert str(ctx.directory / "config.yaml") in msg
    assert "\n" not in msg


def test_directory_and_binary_are_errors(tmp_path):
    ctx, _ = make_ctx(tmp_path)
    (ctx.directory / "sub").mkdir()
    with pytest.raises(ToolError, match="directory"):
        call(ctx, "read", {"filePath": "sub"})
    (ctx.directory / "blob.dat").write_text("text but binary by extension")
    (ctx.directory / "nul.txt").write_bytes(b"abc\x00def")
    for name in ("blob.dat", "nul.txt"):
        with pytest.raises(ToolError, match="Cannot read binary file"):
            call(ctx, "read", {"filePath": name})


def test_image_comes_back_as_attachment(tmp_path):
    ctx, _ = make_ctx(tmp_path)
    png = ctx.directory / "pic.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    res = call(ctx, "read", {"filePath": "pic.png"})
    assert res.output == "Image read successfully"
    assert res.attachments[0].mime == "image/png"
    assert res.attachments[0].url.startswith("data:image/png;base64,iVBORw0KGgo")


def test_empty_file_reads_as_zero_lines(tmp_path):
    ctx, _ = make_ctx(tmp_path)
    (ctx.directory / "empty.txt").write_text("")
    assert "(End of file - total 0 lines)" in call(ctx, "read", {"filePath": "empty.txt"}).output
