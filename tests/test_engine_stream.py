"""The engines' item stream across steps: a stream saved after any number of words (its position and
its partly read block, combatsim.engine.stream_block) and continued reads on the very words a stream
read straight through does, without drawing the partly read block again; the Numba twin agrees."""

from __future__ import annotations

import numpy as np
import pytest

import combatsim.rng as rng_module
from combatsim.engine import (
    new_stream,
    stream_block,
    stream_continue,
    stream_resume,
    stream_retries_used,
    stream_word,
    stream_words_used,
)
from combatsim.rng import DOMAIN_ITEM, ItemStream

SEED, INDEX = 0xF00D_5EED_DEAD_BEEF, 123_456_789_012


def saved_after(words):
    """(words used, retries used, block low, block high) after ``words`` words from the start."""
    rng = new_stream()
    stream_resume(rng, SEED, INDEX, 0, 0)
    for _ in range(words):
        stream_word(rng)
    return stream_words_used(rng), stream_retries_used(rng), stream_block(rng, 0), stream_block(rng, 1)


@pytest.mark.parametrize("words", range(10))
def test_a_continued_stream_reads_on_without_drawing_the_block_again(words, monkeypatch):
    used, retries, low, high = saved_after(words)
    assert used == words
    assert -(1 << 63) <= low < 1 << 63 and -(1 << 63) <= high < 1 << 63  # fits a state column
    if words % 4 == 0:
        assert (low, high) == (0, 0)
    straight = ItemStream(SEED, INDEX)
    expected = [straight.word() for _ in range(words + 9)][words:]
    drawn = rng_module.block

    def refuse_item_blocks(seed, index, block_number, domain):
        assert domain != DOMAIN_ITEM, "the partly read block was drawn again"
        return drawn(seed, index, block_number, domain)

    rng = new_stream()
    with monkeypatch.context() as patch:
        patch.setattr(rng_module, "block", refuse_item_blocks)
        stream_continue(rng, SEED, INDEX, used, retries, low, high)
    assert [stream_word(rng) for _ in range(9)] == expected


@pytest.mark.parametrize("words", range(10))
def test_the_numba_stream_saves_and_continues_as_the_reference(words):
    nb = pytest.importorskip("combatsim.kernels.engine_nb")
    used, retries, low, high = saved_after(words)
    stream_word = nb.STREAMS["stream_word"]  # the engines' stream_word under Numba (rng_nb's)
    rng = nb.new_stream()
    nb.stream_resume(rng, np.uint64(SEED), INDEX, 0, 0)
    for _ in range(words):
        stream_word(rng)
    assert (nb.stream_block(rng, 0), nb.stream_block(rng, 1)) == (low, high)
    resumed = nb.new_stream()
    nb.stream_continue(resumed, np.uint64(SEED), INDEX, used, retries, low, high)
    straight = ItemStream(SEED, INDEX)
    expected = [straight.word() for _ in range(words + 9)][words:]
    assert [int(stream_word(resumed)) for _ in range(9)] == expected
