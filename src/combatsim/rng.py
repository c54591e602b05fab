"""Counter-based randomness: Philox4x32-10 and exactly uniform dice (pure-Python reference).

Every simulated item (an attack, a fight, an episode) owns a counter space, so its outcome is a
pure function of (seed, item index, inputs). The layout below is specified in docs/rng.md; the
Numba (``combatsim.kernels.rng_nb``) and Cython (``combatsim.kernels.rng.pxd``) twins follow it
word for word.

Counter words: (index low 32 bits, index high 32 bits, block, domain). Key: (seed low 32 bits,
seed high 32 bits).
"""

from __future__ import annotations

PHILOX_M0 = 0xD2511F53
PHILOX_M1 = 0xCD9E8D57
PHILOX_W0 = 0x9E3779B9
PHILOX_W1 = 0xBB67AE85
PHILOX_ROUNDS = 10
MASK32 = 0xFFFFFFFF
MASK64 = 0xFFFFFFFFFFFFFFFF

#: Per-item word stream: word j of item i is word j % 4 of block (i, j // 4, DOMAIN_ITEM).
DOMAIN_ITEM = 0
#: One word per item: item i is word i % 4 of block (i // 4, 0, DOMAIN_DENSE).
DOMAIN_DENSE = 1
#: Rejection retries: the r-th retry of item i is word r % 4 of block (i, r // 4, DOMAIN_RETRY).
DOMAIN_RETRY = 2
#: A mixed policy's choices (combatsim.solve.policy.stream_uniforms): member m's word in step t of
#: fight i is word m % 4 of block (i, t, DOMAIN_POLICY | m // 4), apart from every die of the fight.
DOMAIN_POLICY = 1 << 31


def philox4x32(counter: tuple[int, int, int, int], key: tuple[int, int]) -> tuple[int, int, int, int]:
    """Philox4x32-10 (Salmon et al., SC'11): four 32-bit counter words, two key words -> four words."""
    return _philox_rounds(*(int(word) & MASK32 for word in (*counter, *key)))


def philox4x32_arrays(counter, key) -> tuple:
    """``philox4x32`` over numpy arrays of words (uint64 arrays holding 32-bit values): the same
    words, many counters at once."""
    import numpy as np

    return _philox_rounds(*(np.asarray(word, dtype=np.uint64) & np.uint64(MASK32) for word in (*counter, *key)))


def _philox_rounds(c0, c1, c2, c3, k0, k1):
    """The rounds, on 32-bit words held as Python ints or as numpy uint64 arrays (NumPy keeps an
    array uint64 when the other operand is a Python int)."""
    for _ in range(PHILOX_ROUNDS):
        product0 = PHILOX_M0 * c0
        product1 = PHILOX_M1 * c2
        c0, c1, c2, c3 = (
            (product1 >> 32) ^ c1 ^ k0,
            product1 & MASK32,
            (product0 >> 32) ^ c3 ^ k1,
            product0 & MASK32,
        )
        k0 = (k0 + PHILOX_W0) & MASK32
        k1 = (k1 + PHILOX_W1) & MASK32
    return c0, c1, c2, c3


def block(seed: int, index: int, block_number: int, domain: int) -> tuple[int, int, int, int]:
    """The four words of one block of an item's counter space."""
    seed, index = int(seed), int(index)
    return _philox_rounds(index & MASK32, index >> 32, int(block_number) & MASK32, int(domain) & MASK32,
                          seed & MASK32, seed >> 32)


def rejection_threshold(sides: int) -> int:
    """Lemire's threshold: a product whose low word is below it is rejected."""
    return (2**32 - sides) % sides


def scale(word: int, sides: int) -> tuple[int, int]:
    """Multiply-shift: (value in 0..sides-1, low word of the product)."""
    product = word * sides
    return product >> 32, product & MASK32


class ItemStream:
    """The words of one item, consumed in order: item words from DOMAIN_ITEM, retries from DOMAIN_RETRY."""

    __slots__ = ("_block", "_retry_block", "index", "retries_used", "seed", "words_used")

    def __init__(self, seed: int, index: int, words_used: int = 0, retries_used: int = 0) -> None:
        """Item ``index`` of ``seed`` with ``words_used`` words and ``retries_used`` retry words spent."""
        self.seed = seed
        self.index = index
        self.words_used = words_used
        self.retries_used = retries_used
        self._block = block(seed, index, words_used // 4, DOMAIN_ITEM) if words_used & 3 else ()
        self._retry_block = block(seed, index, retries_used // 4, DOMAIN_RETRY) if retries_used & 3 else ()

    def word(self) -> int:
        position = self.words_used % 4
        if position == 0:
            self._block = block(self.seed, self.index, self.words_used // 4, DOMAIN_ITEM)
        self.words_used += 1
        return self._block[position]

    def retry_word(self) -> int:
        position = self.retries_used % 4
        if position == 0:
            self._retry_block = block(self.seed, self.index, self.retries_used // 4, DOMAIN_RETRY)
        self.retries_used += 1
        return self._retry_block[position]

    def bounded(self, word: int, sides: int) -> int:
        """Exactly uniform 0..sides-1 from ``word``, retrying from the retry domain on rejection."""
        threshold = rejection_threshold(sides)
        value, low = scale(word, sides)
        while low < threshold:
            value, low = scale(self.retry_word(), sides)
        return value

    def die(self, sides: int) -> int:
        """One die, 1..sides, from the next item word."""
        return self.bounded(self.word(), sides) + 1

    def roll(self, count: int, sides: int, modifier: int = 0) -> int:
        """``count`` dice of ``sides`` plus ``modifier``: the dice consume words left to right."""
        return sum(self.die(sides) for _ in range(count)) + modifier


def dense_word(seed: int, index: int) -> int:
    """The one DOMAIN_DENSE word of item ``index``."""
    return block(seed, index >> 2, 0, DOMAIN_DENSE)[index & 3]


def dense_die_word(seed: int, index: int, sides: int) -> int:
    """The word ``dense_die(seed, index, sides)`` reads: item ``index``'s dense word or, while
    Lemire's method rejects it, the item's next retry word. The die is ``scale(word, sides)[0] + 1``."""
    word, stream = dense_word(seed, index), None
    while scale(word, sides)[1] < rejection_threshold(sides):
        stream = stream or ItemStream(seed, index)
        word = stream.retry_word()
    return word


def dense_die(seed: int, index: int, sides: int) -> int:
    """The one die, 1..sides, of an item in a one-word-per-item kernel."""
    return ItemStream(seed, index).bounded(dense_word(seed, index), sides) + 1


# Kernels of the "rng" family (registry): dice histograms and per-item values for tests.
def dense_dice(seed, start, count, sides, counts, out) -> None:
    """Each item rolls one die of ``sides[0]`` from the dense layout."""
    for k in range(count):
        value = dense_die(seed, start + k, int(sides[0]))
        if len(counts):
            counts[value - 1] += 1
        if len(out):
            out[k] = value


def item_dice(seed, start, count, sides, dice_per_item, counts, out) -> None:
    """Each item rolls ``dice_per_item`` dice of ``sides[0]`` from its own stream; ``out`` gets the sum."""
    for k in range(count):
        stream = ItemStream(seed, start + k)
        total = 0
        for _ in range(dice_per_item):
            value = stream.die(int(sides[0]))
            if len(counts):
                counts[value - 1] += 1
            total += value
        if len(out):
            out[k] = total


def philox_words(seed, index, blocks, domain, out) -> None:
    for b in range(blocks):
        out[4 * b : 4 * b + 4] = block(seed, index, b, domain)
