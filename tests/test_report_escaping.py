"""Log-derived text is inert in every human format.

The hostile report carries ``<script>`` in a tag name, the run name, a config value, a text
sample, a file path and a reader message, plus ANSI escapes, a Markdown pipe and backticks.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from ppo_doctor.report import RenderOptions, render
from ppo_doctor.report.escape import md, md_fenced, plain
from report_builders import XSS, hostile_report

CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.text: list[str] = []
        self.attrs: list[tuple[str, str]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs += [(k, v or "") for k, v in attrs]

    def handle_data(self, data):
        self.text.append(data)


def test_html_shows_script_as_text_everywhere():
    page = render(hostile_report(), "html", RenderOptions(plots=False))
    parser = _Collect()
    parser.feed(page)
    assert "script" not in parser.tags
    assert not any(t.startswith("<") for t in parser.tags)
    text = "".join(parser.text)
    for shown in (
        f"run-{XSS}|`x`",  # run name
        f"reward/{XSS}",  # tag name (finding metric)
        f"answer {XSS}",  # text sample
        f"logs/{XSS}.jsonl",  # file path of a read error
        f"Reward model {XSS}",  # cause title
    ):
        assert shown in text, shown
    assert "Q: <b>hi</b>" in text  # the sample's prompt, as text
    # config value, escaped in its own table cell
    assert "<td><code>note</code></td><td>&lt;script&gt;alert(1)&lt;/script&gt;</td>" in page
    # ANSI escapes from the config key and the finding message are gone
    assert "\x1b" not in page
    assert "red|pipe" in text


def test_html_attribute_values_cannot_be_broken_out_of():
    report = hostile_report()
    report.runs[0].run.id = 'x" onerror="alert(1)'
    page = render(report, "html", RenderOptions(plots=True))
    parser = _Collect()
    parser.feed(page)
    # no event handler was smuggled in: the quote stayed inside the alt text
    assert not [k for k, _ in parser.attrs if k.startswith("on")]
    assert any(k == "alt" and v.startswith('x" onerror="alert(1)') for k, v in parser.attrs)


def test_markdown_escapes_html_pipes_backticks_and_controls():
    out = render(hostile_report(), "markdown")
    fenced = re.findall(r"^(`{3,})text\n.*?^\1$", out, flags=re.S | re.M)
    assert len(fenced) == 1  # the text sample, in a fence it cannot close early
    outside = re.sub(r"^(`{3,})text\n.*?^\1$", "", out, flags=re.S | re.M)
    assert "<" not in outside
    assert "&lt;script&gt;" in outside
    assert CONTROL.search(out) is None
    summary = next(ln for ln in out.splitlines() if ln.startswith("| run-"))
    # 5 columns: the run name's "|" is escaped, so it does not add a cell
    assert len(re.findall(r"(?<!\\)\|", summary)) == 6
    assert r"\`x\`" in summary


def test_markdown_fence_outgrows_backticks_in_the_text():
    block = md_fenced("a\n````\nb")
    fence = block.splitlines()[0][:-4]
    assert fence == "`" * 5 and block.endswith("\n" + fence)


def test_terminal_strips_ansi_and_control_characters():
    out = render(hostile_report(), "text", RenderOptions(color=False))
    assert "\x1b" not in out and "\x07" not in out
    assert CONTROL.search(out) is None
    assert XSS in out  # plain text needs no HTML escaping, only control stripping
    coloured = render(hostile_report(), "text", RenderOptions(color=True))
    # the only escapes left are the report's own SGR colour codes
    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured) == out


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("a\x1b[31mred\x1b[0m", "ared"),
        ("title\x1b]0;pwned\x07!", "title!"),
        ("clear\x1b[2J\x1b[H", "clear"),
        ("bell\x07 and \x9b c1", "bell and  c1"),
        ("two\nlines\r\n", "two lines "),
    ],
)
def test_plain(raw, expected):
    assert plain(raw) == expected


def test_md_escapes_markup():
    assert md("a|b `c` <i>*d*</i> [e](f)") == r"a\|b \`c\` &lt;i&gt;\*d\*&lt;/i&gt; \[e\]\(f\)"
