"""A worker's run leaves no trace in the example database until the parent keeps it."""

from __future__ import annotations

from hypothesis.database import InMemoryExampleDatabase

from ctxmodel.parallel_worker import BufferedDatabase, apply_ops


def test_a_buffered_database_reads_its_own_writes_and_keeps_them_to_itself() -> None:
    base = InMemoryExampleDatabase()
    base.save(b"k", b"old")
    base.save(b"k", b"gone")
    buffered = BufferedDatabase(base)
    buffered.save(b"k", b"new")
    buffered.delete(b"k", b"gone")
    buffered.move(b"k", b"k.secondary", b"old")
    assert sorted(buffered.fetch(b"k")) == [b"new"]
    assert list(buffered.fetch(b"k.secondary")) == [b"old"]
    assert sorted(base.fetch(b"k")) == [b"gone", b"old"]  # untouched until applied
    apply_ops(base, buffered.ops)
    assert sorted(base.fetch(b"k")) == [b"new"] and list(base.fetch(b"k.secondary")) == [b"old"]


def test_a_buffered_database_over_none_is_a_scratch_database() -> None:
    buffered = BufferedDatabase(None)
    buffered.save(b"k", b"v")
    assert list(buffered.fetch(b"k")) == [b"v"] and buffered.ops == [("save", b"k", b"v")]
