#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""md2scd.py IN.md OUT.scd: a reference page of docs/ as scdoc source, so that
the man page and the Markdown are one text and cannot drift apart.

It knows the subset of Markdown the pages in docs/ use: a first line
`<!-- man: NAME SECTION "DESCRIPTION" -->`, headings, paragraphs, `-` lists
(with indented continuation lines), fenced code blocks, tables, `code`,
**bold** and [links](...). Anything else is a mistake in the page: it fails
rather than render something odd."""
import re
import sys

HEADER = re.compile(r'<!-- man: (\S+) (\d) "([^"]+)" -->')


def escape(text):
    return text.replace("\\", "\\\\").replace("*", "\\*").replace("_", "\\_")


def inline(text):
    """One line of Markdown as scdoc: code and bold become bold, a link its
    text (a man page names its references in its text)."""
    out = []
    pos = 0
    pattern = re.compile(r"`([^`]+)`|\*\*([^*]+)\*\*|\[([^\]]+)\]\(([^)]+)\)")
    for m in pattern.finditer(text):
        out.append(escape(text[pos:m.start()]))
        if m.group(1) is not None:
            out.append("*" + escape(m.group(1)) + "*")
        elif m.group(2) is not None:
            out.append("*" + escape(m.group(2)) + "*")
        else:
            out.append(inline(m.group(3)))
            url = m.group(4)
            if url.startswith(("http://", "https://")):
                out.append(" (" + escape(url) + ")")
        pos = m.end()
    out.append(escape(text[pos:]))
    return "".join(out)


def cells(line):
    line = line.strip()
    if not (line.startswith("|") and line.endswith("|")):
        raise ValueError("not a table row: " + line)
    return [c.strip() for c in line[1:-1].split("|")]


def table(rows):
    """A table as scdoc's tagged paragraphs: the first cell the tag (with
    the type, where there is a type column), the others indented below."""
    head = [h.lower() for h in cells(rows[0])]
    out = []
    for row in rows[2:]:
        c = cells(row)
        if len(c) != len(head):
            raise ValueError("row of %d cells under a header of %d: %s" % (len(c), len(head), row))
        tag = inline(c[0])
        parts = []
        for h, v in zip(head[1:], c[1:]):
            if h == "type":
                tag += " (" + escape(v) + ")"
            elif h in ("meaning", "when", "what it does"):
                parts.append(inline(v))
            else:
                parts.append(escape(h.capitalize()) + ": " + inline(v))
        out.append(tag)
        out.append("\t" + ". ".join(p.rstrip(".") for p in parts) + ".")
        out.append("")
    return out


def convert(lines):
    m = HEADER.fullmatch(lines[0].strip()) if lines else None
    if not m:
        raise ValueError('the first line must be <!-- man: NAME SECTION "DESCRIPTION" -->')
    name, section, description = m.groups()
    out = [f"{name}({section})", "", "# NAME", "", f"{escape(name)} - {escape(description)}", ""]
    i = 1
    started = False
    while i < len(lines):
        line = lines[i].rstrip("\n")
        if not line.strip():
            i += 1
            continue
        if line.startswith("<!--"):
            while "-->" not in lines[i]:
                i += 1
            i += 1
            continue
        if line.startswith("# "):
            i += 1
            continue
        if not started and not line.startswith("## "):
            out += ["# DESCRIPTION", ""]
        started = True
        if line.startswith("#"):
            level, title = line.split(" ", 1)
            if level == "##":
                # A config section keeps its case: "[Limits]", as in the file.
                out += ["# " + escape(title if title.startswith("[") else title.upper()), ""]
            elif level == "###":
                out += ["## " + escape(title), ""]
            elif level == "####":
                out += ["*" + escape(title) + "*", ""]
            else:
                raise ValueError("heading too deep: " + line)
            i += 1
        elif line.startswith("```"):
            out.append("```")
            i += 1
            while not lines[i].startswith("```"):
                # scdoc takes a backslash as an escape even here: the
                # reader's backslashes (a line continued) are doubled.
                out.append(lines[i].rstrip("\n").replace("\\", "\\\\"))
                i += 1
            out += ["```", ""]
            i += 1
        elif line.startswith("|"):
            rows = []
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(lines[i])
                i += 1
            out += table(rows)
        elif line.startswith("- "):
            while i < len(lines) and lines[i].startswith("- "):
                item = lines[i][2:].strip()
                i += 1
                while i < len(lines) and lines[i].startswith("  ") and lines[i].strip():
                    item += " " + lines[i].strip()
                    i += 1
                out.append("- " + inline(item))
            out.append("")
        else:
            para = []
            while i < len(lines) and lines[i].strip() and not lines[i].startswith(("#", "```", "|", "- ", "<!--")):
                para.append(lines[i].strip())
                i += 1
            out += [inline(" ".join(para)), ""]
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: md2scd.py IN.md OUT.scd")
    with open(sys.argv[1], encoding="utf-8") as f:
        lines = f.readlines()
    try:
        out = convert(lines)
    except (ValueError, IndexError) as e:
        sys.exit(f"{sys.argv[1]}: {e}")
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        f.write("\n".join(out).rstrip("\n") + "\n")


if __name__ == "__main__":
    main()
