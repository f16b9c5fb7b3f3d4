"""Bitsets packed into numpy words, for solving many puzzles at once.

A batch of N vectors of n bits is an (N, W) uint64 array with W = ceil(n / 64): bit i
of a vector is bit i % 64 of word i // 64. A GF(2) linear map is applied to a whole
batch by splitting each input into bytes and looking every byte up in a 256-entry table
of precomputed XOR sums (one table per byte position): ceil(n / 8) fancy-indexes and
XORs, whatever the matrix. For an 8-light puzzle that is a single lookup, the seed's
"space for time" idea applied to any linear map.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Sequence, cast

import numpy as np

WORD = 64

if sys.byteorder != "little":  # pragma: no cover - every platform numpy wheels exist for
    raise ImportError("packed bitsets assume a little-endian machine")


def n_words(n_bits: int) -> int:
    return max(1, -(-n_bits // WORD))


def pack_ints(values: Sequence[int], n_bits: int) -> np.ndarray:
    """Python ints -> (N, W) uint64."""
    w = n_words(n_bits)
    out = np.zeros((len(values), w), dtype=np.uint64)
    mask = (1 << WORD) - 1
    for i, v in enumerate(values):
        v = int(v)
        if v < 0 or v >> n_bits:
            raise ValueError(f"value {i} does not fit in {n_bits} bits")
        for k in range(w):
            out[i, k] = (v >> (WORD * k)) & mask
    return out


def unpack_ints(words: np.ndarray) -> list[int]:
    """(N, W) uint64 -> Python ints."""
    words = np.atleast_2d(words)
    out = []
    for row in words.tolist():
        v = 0
        for k, x in enumerate(row):
            v |= int(x) << (WORD * k)
        out.append(v)
    return out


def popcount(words: np.ndarray) -> np.ndarray:
    """Set bits per vector: (..., W) uint64 -> (...) int64."""
    return cast(np.ndarray, np.bitwise_count(words).sum(axis=-1, dtype=np.int64))


def as_words(batch: np.ndarray, n_bits: int) -> np.ndarray:
    """Accept a 1-D array of unsigned ints (n_bits <= 64) or an (N, W) uint64 array."""
    batch = np.asarray(batch)
    w = n_words(n_bits)
    if batch.ndim == 1:
        if w != 1:
            raise ValueError(f"{n_bits}-bit vectors need an (N, {w}) uint64 array")
        if batch.dtype.kind not in "ui":
            raise ValueError(f"expected integer vectors, got dtype {batch.dtype}")
        batch = batch.astype(np.uint64)[:, None]
    if batch.ndim != 2 or batch.shape[1] != w:
        raise ValueError(f"expected an (N, {w}) uint64 array of {n_bits}-bit vectors, got shape {batch.shape}")
    return np.ascontiguousarray(batch, dtype=np.uint64)


@dataclass(frozen=True, eq=False)
class ByteTableMap:
    """A GF(2) linear map from n_in bits to n_out bits, tabulated per input byte.

    `tables[k, v]` is the image of byte value v placed at byte position k, as n_out-bit
    packed words; the image of a vector is the XOR of its bytes' entries.
    """

    n_in: int
    n_out: int
    tables: np.ndarray  # (ceil(n_in / 8), 256, n_words(n_out)) uint64

    @classmethod
    def from_columns(cls, columns: Sequence[int], n_out: int) -> "ByteTableMap":
        """columns[j] is the image of input bit j (a Python int of n_out bits)."""
        n_in = len(columns)
        n_bytes = max(1, -(-n_in // 8))
        images = pack_ints(list(columns) + [0] * (8 * n_bytes - n_in), n_out)  # (8 * n_bytes, W)
        values = np.arange(256, dtype=np.uint16)
        tables = np.zeros((n_bytes, 256, images.shape[1]), dtype=np.uint64)
        for k in range(n_bytes):
            for b in range(8):
                on = ((values >> b) & 1).astype(bool)
                tables[k, on] ^= images[8 * k + b]
        tables.setflags(write=False)
        return cls(n_in, n_out, tables)

    def __call__(self, batch: np.ndarray) -> np.ndarray:
        """Apply to a batch: (N, W_in) uint64 (or 1-D ints) -> (N, W_out) uint64."""
        words = as_words(batch, self.n_in)
        as_bytes = words.view(np.uint8)  # little-endian: byte k holds bits 8k..8k+7
        n_bytes = self.tables.shape[0]
        # np.take, not tables[k][idx]: the general fancy-index path is ~10x slower on 2-D tables
        out = np.take(self.tables[0], as_bytes[:, 0], axis=0)
        for k in range(1, n_bytes):
            out ^= np.take(self.tables[k], as_bytes[:, k], axis=0)
        return out

    def small_table(self) -> np.ndarray | None:
        """For maps of at most 8 input bits: the whole map as one 256-entry table."""
        return self.tables[0] if self.tables.shape[0] == 1 else None
