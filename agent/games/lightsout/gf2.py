"""Linear algebra over GF(2) on bitsets.

A vector is a Python int: bit i is coordinate i. A matrix is a tuple of row ints plus its
column count. XOR is addition, AND then parity is the dot product, so one elimination
step on a 400-column row is a single big-int XOR.

`eliminate` brings a matrix to reduced row echelon form and remembers, for every row it
returns, which original rows were added up to make it. That bookkeeping is what turns
one elimination into everything a solver needs: a particular solution for any right-hand
side (a linear map, so it can be tabulated and vectorised), the null space (the free
choices), and the left null space (the parity checks a right-hand side must pass to be
solvable at all, which is also what explains *why* a state is unreachable).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence


def parity(x: int) -> int:
    return x.bit_count() & 1


def bits(x: int) -> list[int]:
    """The indexes of the set bits of x, ascending."""
    out = []
    while x:
        low = x & -x
        out.append(low.bit_length() - 1)
        x ^= low
    return out


def from_bits(indexes: Iterable[int]) -> int:
    x = 0
    for i in indexes:
        x |= 1 << int(i)
    return x


def transpose(rows: Sequence[int], n_cols: int) -> tuple[int, ...]:
    """The transpose of a len(rows) x n_cols matrix: n_cols rows of len(rows) bits."""
    out = [0] * n_cols
    for r, row in enumerate(rows):
        for c in bits(row):
            if c >= n_cols:
                raise ValueError(f"row {r} has bit {c} set but the matrix has {n_cols} columns")
            out[c] |= 1 << r
    return tuple(out)


def mat_vec(cols: Sequence[int], x: int) -> int:
    """A x for A given by its columns: the XOR of the columns picked by x's bits."""
    y = 0
    for c in bits(x):
        y ^= cols[c]
    return y


@dataclass(frozen=True)
class Elimination:
    """A (n_rows x n_cols) matrix A in reduced row echelon form.

    `rows[i]` is the i-th nonzero reduced row, with leading bit `pivots[i]` (ascending);
    `combos[i]` says which original rows of A sum to `rows[i]`. `left_null` holds, for
    each row that reduced to zero, the original rows that sum to zero: a basis of
    {y : y^T A = 0}.
    """

    n_rows: int
    n_cols: int
    rows: tuple[int, ...]
    pivots: tuple[int, ...]
    combos: tuple[int, ...]
    left_null: tuple[int, ...]

    @property
    def rank(self) -> int:
        return len(self.pivots)

    @property
    def nullity(self) -> int:
        """Dimension of {x : A x = 0}."""
        return self.n_cols - self.rank

    @property
    def free_columns(self) -> tuple[int, ...]:
        pivot_set = set(self.pivots)
        return tuple(c for c in range(self.n_cols) if c not in pivot_set)

    def consistent(self, b: int) -> bool:
        """Does A x = b have a solution? Every left-null vector must be orthogonal to b."""
        return not any(parity(y & b) for y in self.left_null)

    def violated(self, b: int) -> list[int]:
        """The left-null basis vectors y with y . b = 1 (empty iff A x = b is solvable)."""
        return [y for y in self.left_null if parity(y & b)]

    def particular(self, b: int) -> int:
        """The solution of A x = b with every free variable 0 (assumes b is consistent)."""
        x = 0
        for p, combo in zip(self.pivots, self.combos):
            if parity(combo & b):
                x |= 1 << p
        return x

    def particular_map(self) -> tuple[int, ...]:
        """The particular solution as a linear map: entry j is particular(1 << j).

        particular(b) is the XOR of entry j over the set bits j of b, which is what lets
        a batch of right-hand sides be solved with table lookups.
        """
        out = [0] * self.n_rows
        for p, combo in zip(self.pivots, self.combos):
            for j in bits(combo):
                out[j] |= 1 << p
        return tuple(out)

    def null_basis(self) -> tuple[int, ...]:
        """A basis of {x : A x = 0}: one vector per free column f, with bit f set and
        the pivot variables that cancel it."""
        basis = []
        for f in self.free_columns:
            v = 1 << f
            for row, p in zip(self.rows, self.pivots):
                if (row >> f) & 1:
                    v |= 1 << p
            basis.append(v)
        return tuple(basis)


def eliminate(rows: Sequence[int], n_cols: int) -> Elimination:
    """Gauss-Jordan elimination of the matrix whose rows are `rows` (bit c = column c)."""
    n_rows = len(rows)
    work = [int(r) for r in rows]
    for r, row in enumerate(work):
        if row < 0 or row >> n_cols:
            raise ValueError(f"row {r} has bits outside the {n_cols} columns")
    combo = [1 << r for r in range(n_rows)]
    pivots: list[int] = []
    top = 0
    for c in range(n_cols):
        bit = 1 << c
        hit = next((r for r in range(top, n_rows) if work[r] & bit), None)
        if hit is None:
            continue
        work[top], work[hit] = work[hit], work[top]
        combo[top], combo[hit] = combo[hit], combo[top]
        prow, pcombo = work[top], combo[top]
        for r in range(n_rows):
            if r != top and work[r] & bit:
                work[r] ^= prow
                combo[r] ^= pcombo
        pivots.append(c)
        top += 1
        if top == n_rows:
            break
    return Elimination(
        n_rows=n_rows, n_cols=n_cols, rows=tuple(work[:top]), pivots=tuple(pivots),
        combos=tuple(combo[:top]), left_null=tuple(combo[top:]),
    )  # fmt: skip


def rank(rows: Sequence[int], n_cols: int) -> int:
    return eliminate(rows, n_cols).rank


def span(basis: Sequence[int]) -> list[int]:
    """Every XOR combination of `basis` (2^len elements; for small bases only)."""
    out = [0]
    for v in basis:
        out += [x ^ v for x in out]
    return out
