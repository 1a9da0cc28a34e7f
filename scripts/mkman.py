#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""mkman.py: build mshim's manual pages, its --help texts and its bash
completion from ONE source per page (man/*.txt), so the three cannot
disagree. Standard library only.

    scripts/mkman.py --version V [--date YYYY-MM-DD] --out DIR man/*.txt

writes DIR/man/NAME.SECTION (roff, man(7) macros), DIR/help.c (every
command's --help text, tools/lib/help.c prints them) and DIR/mshim.bash (the
completion). Nothing else reads the sources.

The source format (see man/mshim-pcrs.1.txt for a short example):

  line 1        NAME(SECTION) -- one-line summary      (the NAME section)
  # TITLE       a section (.SH). Sections NAME is made from line 1; a
                section "SEE ALSO" is man-only.
  # TITLE [help: log diff]
                a section whose body is the whole --help text of
                `mshim log diff` (its "## " subsections become the help's
                headings); in the page it is an ordinary section.
  ## TITLE      a subsection (.SS)
  % text        a comment
  blank line    ends a block. A block is one of:
    paragraph   lines of text, filled (man) or re-wrapped at 79 (help);
    definition list
                unindented term lines, each followed by its description
                indented by spaces: OPTIONS, COMMANDS, ENVIRONMENT...
                In a term the first word is bold, options (-x, --xx) are
                bold and UPPERCASE words are placeholders (italic);
    bullet list lines starting "- ", continued by lines indented 2;
    ```         verbatim lines up to the closing ``` (examples).
  In a SYNOPSIS section each line is one usage line (help: "Usage: ...");
  a line indented by spaces continues the previous one.
  `text` is literal text: bold in the page, unquoted in --help.

Which help unit a section belongs to: on a section-1 page mshim-X, to the
help of `mshim X` (page mshim: `mshim --help`); a section-5 page has no
help. SYNOPSIS becomes "Usage:", DESCRIPTION has no heading, other titles
become "Title:".

Adding an option to a command: add its term and indented description to
the OPTIONS list of man/mshim-CMD.1.txt; `make` rebuilds the page, the
--help text and the completion, and tests/cli/test_man.sh checks that
every long option in tools/cmd/*.c is documented in some page.
"""
import argparse
import os
import re
import sys
import textwrap

WIDTH = 79
MAN_ONLY = {"SEE ALSO"}


class Page:
    def __init__(self, path):
        self.path = path
        with open(path, encoding="ascii") as f:
            lines = f.read().split("\n")
        m = re.match(r"^([a-z0-9.-]+)\(([1-8])\) -- (.+)$", lines[0])
        if not m:
            die(path, 1, "first line must be 'NAME(SECTION) -- summary'")
        self.name, self.section, self.summary = m.group(1), m.group(2), m.group(3)
        if self.section != "1":
            self.unit = None
        elif self.name == "mshim":
            self.unit = ""
        elif self.name.startswith("mshim-"):
            self.unit = self.name[len("mshim-"):]
        else:
            die(path, 1, "a section-1 page must be named mshim or mshim-COMMAND")
        # Elements: ("sh"|"ss", title, unit) and ("block", kind, data, unit).
        self.elems = []
        self.parse(lines[1:])

    def parse(self, lines):
        unit = None
        block, lineno, verbatim = [], 1, None
        for raw in lines:
            lineno += 1
            if verbatim is not None:
                if raw.strip() == "```":
                    self.elems.append(("block", "verbatim", verbatim, unit))
                    verbatim = None
                else:
                    verbatim.append(raw.rstrip())
                continue
            line = raw.rstrip()
            if line.startswith("%"):
                continue
            if line.startswith("#") or line.strip() == "```" or not line:
                self.flush(block, unit, lineno)
                block = []
            if line.strip() == "```":
                verbatim = []
            elif line.startswith("## "):
                self.elems.append(("ss", line[3:].strip(), unit))
            elif line.startswith("# "):
                m = re.match(r"^# ([A-Z0-9 .-]+?)(?: \[help: ([a-z -]+)\])?$", line)
                if not m:
                    die(self.path, lineno, "bad section heading")
                title = m.group(1)
                if m.group(2):
                    unit = m.group(2)
                elif title in MAN_ONLY:
                    unit = None
                else:
                    unit = self.unit
                self.elems.append(("sh", title, unit, m.group(2) is not None))
            elif line:
                block.append((lineno, line))
        if verbatim is not None:
            die(self.path, lineno, "``` block not closed")
        self.flush(block, unit, lineno)

    def flush(self, block, unit, lineno):
        if not block:
            return
        heads = [e for e in self.elems if e[0] in ("sh", "ss")]
        title = heads[-1][1] if heads else ""
        if title == "SYNOPSIS":
            if block[0][1][0].isspace():
                die(self.path, block[0][0], "a usage line must not be indented")
            self.elems.append(("block", "synopsis", [l for _, l in block], unit))
        elif block[0][1].startswith("- "):
            items = []
            for n, l in block:
                if l.startswith("- "):
                    items.append(l[2:].strip())
                elif l.startswith("  ") and items:
                    items[-1] += " " + l.strip()
                else:
                    die(self.path, n, "a bullet list line must start '- ' or be indented 2")
            self.elems.append(("block", "bullets", items, unit))
        elif len(block) > 1 and block[1][1][0].isspace() and not block[0][1][0].isspace():
            items = []
            for n, l in block:
                if not l[0].isspace():
                    items.append([l.strip(), ""])
                else:
                    items[-1][1] = (items[-1][1] + " " + l.strip()).strip()
            for t, d in items:
                if not d:
                    die(self.path, block[0][0], "definition '%s' has no description" % t)
            self.elems.append(("block", "deflist", items, unit))
        else:
            for n, l in block:
                if l[0].isspace():
                    die(self.path, n, "an indented line outside a definition list")
            self.elems.append(("block", "para", " ".join(l.strip() for _, l in block), unit))


def die(path, line, msg):
    sys.exit("%s:%d: %s" % (path, line, msg))


# ---- roff ---------------------------------------------------------------------

def roff_escape(s):
    return s.replace("\\", "\\e")


def roff_literal(s):
    """Literal text (commands, options): bold, with real minus signs so
    that a copied option works."""
    return "\\fB" + roff_escape(s).replace("-", "\\-") + "\\fR"


def roff_text(s):
    """Running text with `literal` spans."""
    parts = s.split("`")
    if len(parts) % 2 == 0:
        raise ValueError("unbalanced ` in: " + s)
    out = "".join(roff_literal(p) if i % 2 else roff_escape(p) for i, p in enumerate(parts))
    return "\\&" + out if out[:1] in (".", "'") else out


OPT_RE = re.compile(r"(?<![\w-])(--?[A-Za-z0-9][A-Za-z0-9_-]*)")
PLACEHOLDER_RE = re.compile(r"\b([A-Z][A-Z0-9_]*)\b")


def roff_code(s, bold_head):
    """A term or usage line: its head (the first word, or the command words
    of a usage line) bold, options bold, UPPERCASE placeholders italic."""
    head, rest = "", s
    if bold_head:
        m = re.match(r"^([^\s,\[\]]+)(.*)$", s)
        head, rest = m.group(1), m.group(2)
        # A usage line's command words: "mshim vars list ...".
        while True:
            m = re.match(r"^( [a-z][a-z0-9-]*)(?=\s|$)(.*)$", rest)
            if not m or not head.startswith("mshim"):
                break
            head, rest = head + m.group(1), m.group(2)
    out, pos = [], 0
    for m in re.finditer(OPT_RE.pattern + "|" + PLACEHOLDER_RE.pattern, rest):
        out.append(roff_escape(rest[pos:m.start()]))
        if m.group(1):
            out.append(roff_literal(m.group(1)))
        else:
            out.append("\\fI" + m.group(2) + "\\fR")
        pos = m.end()
    out.append(roff_escape(rest[pos:]))
    text = (roff_literal(head) if head else "") + "".join(out)
    return "\\&" + text if text[:1] in (".", "'") else text


def to_roff(page, version, date):
    o = ['.\\" Generated by scripts/mkman.py from %s; edit that file, not this one.' % page.path,
         '.TH "%s" "%s" "%s" "mshim %s" "mshim manual"' % (page.name.upper(), page.section, date, version),
         ".SH NAME", "%s \\- %s" % (roff_escape(page.name).replace("-", "\\-"), roff_text(page.summary))]
    for e in page.elems:
        if e[0] == "sh":
            o.append('.SH "%s"' % e[1])
        elif e[0] == "ss":
            o.append('.SS "%s"' % e[1].upper())
        else:
            kind, data = e[1], e[2]
            if kind == "synopsis":
                o.append(".nf")
                o.extend(roff_code(u, not u[0].isspace()) for u in data)
                o.append(".fi")
            elif kind == "para":
                o += [".PP", roff_text(data)]
            elif kind == "deflist":
                for t, d in data:
                    o += [".TP", roff_code(t, True), roff_text(d)]
            elif kind == "bullets":
                for b in data:
                    o += [".IP \\(bu 2", roff_text(b)]
            elif kind == "verbatim":
                o += [".PP", ".RS 4", ".nf"]
                o.extend("\\&" + roff_escape(v) for v in data)
                o += [".fi", ".RE"]
    return "\n".join(o) + "\n"


# ---- --help -------------------------------------------------------------------

def plain(s):
    return s.replace("`", "")


def wrap(s, width, first, rest):
    return textwrap.wrap(plain(s), width=width, initial_indent=first, subsequent_indent=rest,
                         break_long_words=False, break_on_hyphens=False) or [first.rstrip()]


def help_heading(title):
    return title[0] + title[1:].lower() + ":"


def help_deflist(items):
    # The description column fits the terms up to 20 characters; a longer
    # term stands on its own line.
    col = max([len(t) + 4 for t, _ in items if len(t) <= 20] or [8])
    out = []
    for t, d in items:
        if len(t) + 4 <= col:
            out += wrap(d, WIDTH, "  " + t.ljust(col - 2), " " * col)
        else:
            out.append("  " + t)
            out += wrap(d, WIDTH, " " * col, " " * col)
    return out


def help_text(pages, unit):
    chunks = []   # lists of lines, joined by blank lines
    heading = None
    for p in pages:
        for e in p.elems:
            if e[0] in ("sh", "ss"):
                own = e[0] == "sh" and len(e) > 3 and e[3]
                if e[2] == unit and not own:
                    heading = e[1]
                continue
            if e[3] != unit:
                continue
            kind, data = e[1], e[2]
            lines = []
            if heading not in (None, "SYNOPSIS", "DESCRIPTION") and kind != "synopsis":
                lines.append(help_heading(heading))
            heading = None
            if kind == "synopsis":
                lines += ["Usage: " + data[0]] + ["       " + plain(u) for u in data[1:]]
            elif kind == "para":
                lines += wrap(data, WIDTH, "", "")
            elif kind == "deflist":
                lines += help_deflist(data)
            elif kind == "bullets":
                for b in data:
                    lines += wrap(b, WIDTH, "  - ", "    ")
            elif kind == "verbatim":
                lines += ["  " + v if v else "" for v in data]
            chunks.append(lines)
    if not chunks:
        return None
    return "\n\n".join("\n".join(c) for c in chunks) + "\n"


def c_string(s):
    out = []
    for line in s.splitlines(True):
        out.append('"' + line.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"')
    return "\n        ".join(out)


def units_of(pages):
    seen = []
    for p in pages:
        for e in p.elems:
            if e[0] == "block" and e[3] is not None and e[3] not in seen:
                seen.append(e[3])
    return seen


def to_help_c(pages):
    o = ["/* Generated by scripts/mkman.py from the man/ sources; edit those, not this. */",
         '#include "help.h"', "", "const cli_help_page cli_help_pages[] = {"]
    for u in units_of(pages):
        o.append('        { "%s",\n        %s },' % (u, c_string(help_text(pages, u))))
    o += ["        { 0 },", "};", ""]
    return "\n".join(o)


# ---- bash completion ----------------------------------------------------------

def unit_words(pages, unit):
    """The options of a help unit (from its OPTIONS lists) and its
    sub-commands (the first words of its COMMANDS lists)."""
    opts, subs, title = [], [], None
    for p in pages:
        for e in p.elems:
            if e[0] in ("sh", "ss"):
                title = e[1].upper()
                continue
            if e[3] != unit or e[1] != "deflist":
                continue
            for t, _ in e[2]:
                if title == "OPTIONS":
                    opts += [o for o in OPT_RE.findall(t) if o not in opts]
                elif title == "COMMANDS":
                    w = t.split()[0]
                    if w not in subs:
                        subs.append(w)
    return opts, subs


def to_completion(pages):
    units = units_of(pages)
    o = ["# bash completion for mshim. Generated by scripts/mkman.py from man/*.txt.",
         "_mshim() {",
         '        local cur=${COMP_WORDS[COMP_CWORD]} unit="" w i',
         "        # The command words typed so far name the help unit: \"vars\", \"log diff\".",
         "        for ((i = 1; i < COMP_CWORD; i++)); do",
         "                w=${COMP_WORDS[i]}",
         "                [[ $w == -* ]] && break",
         "                [[ $i == 1 && $w == help ]] && continue    # mshim help log diff",
         '                case "${unit:+$unit }$w" in',
         "                %s) unit=${unit:+$unit }$w ;;" % "|".join('"%s"' % u for u in units if u),
         "                *) break ;;",
         "                esac",
         "        done",
         "        local opts subs",
         '        case "$unit" in']
    for u in units:
        opts, subs = unit_words(pages, u)
        subs += [x.split()[-1] for x in units if x and x.rsplit(" ", 1)[0] == u and " " in x]
        if u == "":
            subs = [x for x in units if x and " " not in x] + ["help"]
        o.append('        "%s") opts="%s"; subs="%s" ;;' % (u, " ".join(opts), " ".join(subs)))
    o += ["        esac",
          "        if [[ $cur == -* ]]; then",
          '                COMPREPLY=($(compgen -W "$opts" -- "$cur"))',
          "        elif [[ $i == $COMP_CWORD && -n $subs ]]; then",
          '                COMPREPLY=($(compgen -W "$subs" -- "$cur"))',
          "        else",
          "                COMPREPLY=($(compgen -f -- \"$cur\"))",
          "        fi",
          "}",
          "complete -o filenames -F _mshim mshim", ""]
    return "\n".join(o)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--version", required=True)
    ap.add_argument("--date", default="", help="the pages' date, YYYY-MM-DD")
    ap.add_argument("--out", required=True)
    ap.add_argument("sources", nargs="+")
    a = ap.parse_args()
    pages = [Page(s) for s in sorted(a.sources)]
    for p in pages:
        write(os.path.join(a.out, "man", "%s.%s" % (p.name, p.section)), to_roff(p, a.version, a.date))
    write(os.path.join(a.out, "help.c"), to_help_c(pages))
    write(os.path.join(a.out, "mshim.bash"), to_completion(pages))


if __name__ == "__main__":
    main()
