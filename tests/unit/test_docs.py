"""Every clause the code cites exists in docs/contract.md or docs/domain.md, and nothing points outside.

Citations are the forms the code uses: ``contract`` or ``domain`` followed by a section sign and a
clause number (optionally ``rule N`` / ``rules N, M`` / ``question N``), invariant ids after the
domain's section 7 or after ``domain`` itself, and lists that continue a citation (``, §N.M``,
``, D6``, ranges with ``-``). A bare section-sign citation is read as the contract's (in
docs/domain.md: the domain's own), or as the document of the citation whose list it continues on
the line before. A clause resolves when the document has a heading numbered with it
(``### 4.5 ...``, ``## 4. ...``, ``### A. ...``), a bullet opening with the bold invariant id, or
an explicit ``<a id="..."></a>`` anchor.

This file spells the section sign as an escape so that its own fake citations are not scanned.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterable, Iterator
from pathlib import Path

import attrs
import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = {"contract": ROOT / "docs" / "contract.md", "domain": ROOT / "docs" / "domain.md"}
#: Folders whose ``*.py`` files are scanned (``strategies`` and ``properties`` install inside ctxmodel
#: through pyproject's ``package-dir``; there is no copy of them under ``ctxmodel/``).
PY_DIRS = ("ctxmodel", "strategies", "properties", "tests", "benchmarks", "regressions")
SECTION = "\u00a7"
#: The old out-of-repository location, split so this file does not match itself.
OUTSIDE_POINTER = "shared" + "/spec"

_KEYWORD = re.compile(rf"(?i)\b(contract|domain)(?:'s)?[\s#\"']*(?={SECTION})")
_REF = re.compile(rf"{SECTION}{SECTION}?\s*(\d+(?:\.\d+)*)")
#: Text right before a section sign that makes it someone else's numbering.
_EXTERNAL = re.compile(r"(?:ECMA-\d+|RFC ?\d+|ISO[ -]?\d+|\.md`*|\.txt`*)\s*$")
_SUB = re.compile(r"\s+(rules?|questions?)\s+(\d+(?:\s*(?:,|and|or|-|\u2013|/)\s*\d+)*)")
_INVARIANT_AFTER_7 = re.compile(r"\s+([A-D])(\d+)?\b")
_INVARIANT_MORE = re.compile(r"\s*(?:,|-|\u2013|/|\band\b)\s*([A-D]\d+)\b")
_DOMAIN_INVARIANT = re.compile(r"\b(?i:domain)\s+([A-D]\d+)\b")
_NUMBERS = re.compile(r"\d+")
_CONTINUES = re.compile(r"(?:[,;(\u2013-]|\band|\bor|\bto)\s*$")
_LEADING_NOISE = re.compile(r"^[\s#\"'*>(`]*$")

_HEADING_NUMBER = re.compile(r"^#{1,6}\s+(\d+(?:\.\d+)*)\.?(?=\s|$)", re.M)
_HEADING_GROUP = re.compile(r"^#{1,6}\s+([A-D])\.\s", re.M)
_BULLET_ID = re.compile(r"^\s*[-*]\s+\*\*([A-D]\d+)\*\*", re.M)
_ANCHOR = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"")


@attrs.frozen
class Citation:
    path: str
    line: int
    doc: str  # "contract" or "domain"
    clause: str  # "4.5", "4", "A10", "A"
    text: str  # the citation as written, for the failure message

    def where(self) -> str:
        return f"{self.path}:{self.line}: {self.doc} {self.clause} (from {self.text!r})"


def anchors(markdown: str) -> set[str]:
    """The clause ids a document defines: numbered headings, invariant groups and bullets, anchors."""
    found = set(_HEADING_NUMBER.findall(markdown))
    found |= set(_HEADING_GROUP.findall(markdown))
    found |= set(_BULLET_ID.findall(markdown))
    found |= set(_ANCHOR.findall(markdown))
    return found


def _line_of(starts: list[int], offset: int) -> int:
    lo, hi = 0, len(starts)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if starts[mid] <= offset:
            lo = mid
        else:
            hi = mid
    return lo + 1


def _span(numbers: str) -> list[str]:
    """``"1, 2 and 4"`` or ``"1-9"``: the numbers named (a range by its two ends)."""
    return _NUMBERS.findall(numbers)


def citations(text: str, path: str, default_doc: str = "contract") -> Iterator[Citation]:
    """Every citation in ``text``, one per clause it names."""
    lines = text.split("\n")
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    keywords = [(m.start(), m.end(), m.group(1).lower()) for m in _KEYWORD.finditer(text)]
    last_doc_on_line: dict[int, str] = {}
    k = 0
    governing: tuple[int, int, str] | None = None
    for ref in _REF.finditer(text):
        p = ref.start()
        while k < len(keywords) and keywords[k][1] <= p:
            governing = keywords[k]
            k += 1
        lineno = _line_of(starts, p)
        line_start = starts[lineno - 1]
        before = text[line_start:p]
        if _EXTERNAL.search(before):
            continue
        doc = None
        if governing is not None and (governing[0] >= line_start or governing[1] == p):
            doc = governing[2]
        elif _LEADING_NOISE.match(before) and lineno - 1 in last_doc_on_line:
            if _CONTINUES.search(lines[lineno - 2].rstrip()):
                doc = last_doc_on_line[lineno - 1]
        if doc is None:
            doc = default_doc
        last_doc_on_line[lineno] = doc
        number = ref.group(1)
        rest = text[ref.end() : starts[lineno] - 1 if lineno < len(starts) else len(text)]
        written = text[p : ref.end()]
        yield Citation(path, lineno, doc, number, written)
        tail = 0
        sub = _SUB.match(rest)
        if sub:
            for n in _span(sub.group(2)):
                yield Citation(path, lineno, doc, f"{number}.{n}", written + sub.group(0))
            tail = sub.end()
        if doc == "domain" and number == "7":
            inv = _INVARIANT_AFTER_7.match(rest, tail)
            if inv:
                yield Citation(path, lineno, "domain", inv.group(1) + (inv.group(2) or ""), written + inv.group(0))
                tail = inv.end()
        for more in _more_invariants(rest, tail):
            yield Citation(path, lineno, "domain", more, written + " .. " + more)
    for m in _DOMAIN_INVARIANT.finditer(text):
        lineno = _line_of(starts, m.start())
        yield Citation(path, lineno, "domain", m.group(1), m.group(0))
        rest = text[m.end() : starts[lineno] - 1 if lineno < len(starts) else len(text)]
        for more in _more_invariants(rest, 0):
            yield Citation(path, lineno, "domain", more, m.group(0) + " .. " + more)


def _more_invariants(rest: str, pos: int) -> Iterator[str]:
    while True:
        more = _INVARIANT_MORE.match(rest, pos)
        if not more:
            return
        yield more.group(1)
        pos = more.end()


def unresolved(found: Iterable[Citation], defined: dict[str, set[str]]) -> list[str]:
    return [c.where() for c in found if c.clause not in defined[c.doc]]


def source_files() -> list[Path]:
    """Each scanned file once: ``*.py`` under PY_DIRS (symlinked folders not followed), ``*.md`` at
    the root and under docs/."""
    files: list[Path] = []
    for folder in PY_DIRS:
        for dirpath, dirnames, filenames in os.walk(ROOT / folder):
            dirnames[:] = [d for d in dirnames if d != "__pycache__" and not d.startswith(".")]
            files.extend(Path(dirpath) / f for f in filenames if f.endswith(".py"))
    files.extend(ROOT.glob("*.md"))
    for dirpath, _dirs, filenames in os.walk(ROOT / "docs"):
        files.extend(Path(dirpath) / f for f in filenames if f.endswith(".md"))
    return sorted(set(files))


def scan_repository() -> list[Citation]:
    found: list[Citation] = []
    for file in source_files():
        rel = file.relative_to(ROOT).as_posix()
        default = "domain" if file == DOCS["domain"] else "contract"
        found.extend(citations(file.read_text(encoding="utf-8"), rel, default))
    return found


def _defined() -> dict[str, set[str]]:
    return {doc: anchors(path.read_text(encoding="utf-8")) for doc, path in DOCS.items()}


def outside_pointers(files: Iterable[tuple[str, str]]) -> list[str]:
    """``path:line`` of every mention of the out-of-repository spec folder, docs/ notes excepted."""
    hits = []
    for rel, text in files:
        if rel.startswith("docs/") and rel not in ("docs/contract.md", "docs/domain.md"):
            continue
        for i, line in enumerate(text.splitlines(), 1):
            if OUTSIDE_POINTER in line:
                hits.append(f"{rel}:{i}: {line.strip()}")
    return hits


def _tracked_texts() -> Iterator[tuple[str, str]]:
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout.decode(
        "utf-8", "surrogateescape"
    )
    for rel in filter(None, listed.split("\0")):
        path = ROOT / rel
        if path.is_symlink() or not path.is_file():
            continue
        yield rel, path.read_bytes().decode("utf-8", "replace")


# -- the repository -------------------------------------------------------------------------------


def test_every_citation_resolves() -> None:
    found = scan_repository()
    assert len(found) > 300, f"the scanner found only {len(found)} citations: is it broken?"
    missing = unresolved(found, _defined())
    assert not missing, "citations with no heading or anchor:\n" + "\n".join(missing)


def test_nothing_points_outside_the_repository() -> None:
    try:
        texts = list(_tracked_texts())
    except (OSError, subprocess.CalledProcessError) as exc:  # pragma: no cover - no git here
        pytest.skip(f"git ls-files unavailable: {exc}")
    hits = outside_pointers(texts)
    assert not hits, f"point at docs/contract.md or docs/domain.md instead of {OUTSIDE_POINTER}:\n" + ("\n".join(hits))


def test_the_documents_number_their_clauses() -> None:
    defined = _defined()
    assert {"1", "2", "3", "4", "5", "6", "7", "8", "9"} <= defined["contract"]
    assert {f"3.{n}" for n in range(1, 9)} | {f"4.{n}" for n in range(1, 10)} <= defined["contract"]
    assert {"A", "B", "C", "D", "A1", "A16", "B10", "C13", "D10", "5.1", "8.14"} <= defined["domain"]


# -- the checker itself can fail ------------------------------------------------------------------

S = SECTION
D = "domain"  # spelled apart so the fake invariant ids below are not scanned
_DEFINED = {"contract": {"3", "3.4", "4", "4.5", "5"}, "domain": {"2.1", "7", "8", "8.3", "A", "A10", "C11", "D6"}}


def _missing(text: str, default: str = "contract") -> list[str]:
    return unresolved(citations(text, "fake.py", default), _DEFINED)


def test_a_fake_contract_clause_fails() -> None:
    missing = _missing(f'"""Rule of contract {S}99.9, says nobody."""\n')
    assert missing == ["fake.py:1: contract 99.9 (from '\u00a799.9')"]


def test_fake_domain_clauses_and_invariants_fail() -> None:
    text = f"# {D} {S}7 A99 and {D} C77\n# ({D} {S}2.1, {S}9.9, D6, D66)\n"
    missing = _missing(text)
    assert [m.split(": ")[1].split(" (")[0] for m in missing] == [
        f"{D} A99",
        f"{D} 9.9",
        f"{D} D66",
        f"{D} C77",
    ]
    assert missing[0].startswith("fake.py:1:") and missing[1].startswith("fake.py:2:")


def test_rules_questions_and_continued_lines() -> None:
    assert _missing(f"contract {S}3 rule 4, {S}4 rules 5 and 6") == [
        "fake.py:1: contract 4.6 (from '\u00a74 rules 5 and 6')"
    ]
    assert _missing(f"domain {S}8 question 3; domain {S}8 question 4")[0].startswith("fake.py:1: domain 8.4")
    # a bare clause continuing the previous line's list keeps that line's document
    assert _missing(f"(domain {S}2.1,\n{S}7 A10)") == []
    assert _missing(f"({D} {S}2.1,\n{S}7 A11)") == [f"fake.py:2: {D} A11 (from '\u00a77 A11')"]
    # ... and a bare clause starting a new thought is the contract's
    assert _missing(f"see domain {S}2.1 here.\n{S}4.5 holds") == []
    assert _missing(f"the keyword may end a line: contract\n    {S}4.5") == []


def test_valid_and_foreign_citations_pass() -> None:
    text = (
        f"contract {S}4.5; Contract {S}3.4, domain {S}7 C11; the contract's {S}5\n"
        f"ECMA-262 {S}25.5.2.3 and `SPECIFICATION.md` {S}9 are someone else's numbering\n"
        f"starts with {S}\n"
    )
    assert _missing(text) == []
    assert _missing(f"{S}2.1 in the domain's own text", default="domain") == []


def test_outside_pointers_are_found_except_in_notes() -> None:
    files = [
        ("README.md", f"see ../{OUTSIDE_POINTER}/contract.md\n"),
        ("ctxmodel/x.py", f"# fine\n# {OUTSIDE_POINTER}\n"),
        ("docs/notes/history.md", f"moved from {OUTSIDE_POINTER}\n"),
        ("docs/contract.md", f"from {OUTSIDE_POINTER}\n"),
    ]
    hits = outside_pointers(files)
    assert [h.split(": ")[0] for h in hits] == ["README.md:1", "ctxmodel/x.py:2", "docs/contract.md:1"]
