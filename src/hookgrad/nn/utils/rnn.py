"""torch.nn.utils.rnn: pack a batch of variable-length sequences so a recurrent layer steps
only over real elements, and pad them back.

A packed batch keeps its rows time-major: all sequences' first elements (longest sequence
first), then all second elements of the sequences that have one, and so on; ``batch_sizes[t]``
says how many sequences are still running at step ``t``. Every conversion here is a single
``index_select`` on the flattened rows, so gradients (and double backward) come from that one op.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple, Optional, Union

import numpy as np

import hookgrad
from ...tensor import Tensor

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence",
           "pad_sequence", "unpad_sequence", "pack_sequence", "unpack_sequence"]


class _PackedFields(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Optional[Tensor]
    unsorted_indices: Optional[Tensor]


class PackedSequence(_PackedFields):
    """A packed batch: ``data`` (rows time-major), ``batch_sizes`` (int64, one per step) and the
    permutation that sorted the batch by length (``None`` when it came sorted).

    Build it with :func:`pack_padded_sequence` or :func:`pack_sequence`, not by hand. Like
    torch's, it is a named tuple, so ``data, batch_sizes, *_ = packed`` works. hookgrad runs on
    the CPU only, so there is no ``cuda()`` or ``pin_memory()``.
    """

    def __new__(cls, data: Tensor, batch_sizes: Optional[Tensor] = None,
                sorted_indices: Optional[Tensor] = None,
                unsorted_indices: Optional[Tensor] = None) -> "PackedSequence":
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs) -> "PackedSequence":
        """Convert ``data`` (dtype); the sizes and permutations stay int64."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        return type(self)(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    def cpu(self, *args, **kwargs) -> "PackedSequence":
        return self

    def double(self) -> "PackedSequence":
        return self.to(dtype=hookgrad.float64)

    def float(self) -> "PackedSequence":
        return self.to(dtype=hookgrad.float32)

    def half(self) -> "PackedSequence":
        return self.to(dtype=hookgrad.float16)

    def long(self) -> "PackedSequence":
        return self.to(dtype=hookgrad.int64)

    def int(self) -> "PackedSequence":
        return self.to(dtype=hookgrad.int32)

    def short(self) -> "PackedSequence":
        return self.to(dtype=hookgrad.int16)

    def char(self) -> "PackedSequence":
        return self.to(dtype=hookgrad.int8)

    def byte(self) -> "PackedSequence":
        return self.to(dtype=hookgrad.uint8)

    @property
    def is_cuda(self) -> bool:
        return False

    def is_pinned(self) -> bool:
        return False


def invert_permutation(permutation: Optional[Tensor]) -> Optional[Tensor]:
    """The permutation ``inverse`` with ``inverse[permutation[i]] == i`` (None stays None)."""
    if permutation is None:
        return None
    order = np.asarray(permutation.tolist(), dtype=np.int64).reshape(-1)
    inverse = np.empty_like(order)
    inverse[order] = np.arange(order.size, dtype=np.int64)
    return hookgrad.tensor(inverse, dtype=hookgrad.int64)


def _index(rows: np.ndarray) -> Tensor:
    return hookgrad.tensor(np.ascontiguousarray(rows, dtype=np.int64).reshape(-1))


def _lengths_list(lengths) -> list:
    if isinstance(lengths, Tensor):
        if lengths.dim() != 1:
            raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got "
                               f"{lengths.dim()}D cpu Long tensor")
        return [int(v) for v in lengths.tolist()]
    values = np.asarray(lengths)
    if values.ndim != 1:
        raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got "
                           f"{values.ndim}D cpu Long tensor")
    return [int(v) for v in values.tolist()]


def pack_padded_sequence(input: Tensor, lengths: Union[Tensor, list],
                         batch_first: bool = False, enforce_sorted: bool = True
                         ) -> PackedSequence:
    """Pack a padded batch ``(T, B, *)`` (``(B, T, *)`` if batch_first) whose sequence ``b``
    has ``lengths[b]`` real steps. With ``enforce_sorted`` the lengths must be decreasing;
    otherwise the batch is sorted here and the permutation kept in the result.

    Differs from torch: a length longer than the padded input raises (torch reads past it)."""
    sizes = _lengths_list(lengths)
    if input.dim() < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-max(input.dim(), 1)}, {max(input.dim(), 1) - 1}], but got 1)")
    batch_dim, time_dim = (0, 1) if batch_first else (1, 0)
    batch, steps = input.shape[batch_dim], input.shape[time_dim]
    sorted_indices = None
    order = np.arange(len(sizes))
    if not enforce_sorted:
        order = np.argsort(-np.asarray(sizes, dtype=np.int64), kind="stable")
        sizes = [sizes[i] for i in order]
        sorted_indices = hookgrad.tensor(order, dtype=hookgrad.int64)
    if len(sizes) != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{len(sizes)} (batch_size={batch})")
    if sizes and sizes[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if any(a < b for a, b in zip(sizes, sizes[1:])):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when "
                           "`enforce_sorted` is True. You can pass `enforce_sorted=False` to "
                           "pack_padded_sequence and/or pack_sequence to sidestep this "
                           "requirement if you do not need ONNX exportability.")
    if sizes[0] > steps:
        raise RuntimeError(f"pack_padded_sequence: a length ({sizes[0]}) exceeds the padded "
                           f"sequence length ({steps})")
    lengths_array = np.asarray(sizes, dtype=np.int64)
    time = np.arange(sizes[0])
    batch_sizes = (lengths_array[None, :] > time[:, None]).sum(axis=1)
    # rows of the flattened input, time-major, batch entries in sorted order
    source = order[None, :] * (steps if batch_first else 1) + \
        time[:, None] * (1 if batch_first else batch)
    rows = source[lengths_array[None, :] > time[:, None]]
    flat = input.reshape((batch * steps,) + tuple(input.shape[2:]))
    data = flat.index_select(0, _index(rows))
    return PackedSequence(data, hookgrad.tensor(batch_sizes, dtype=hookgrad.int64),
                          sorted_indices, None)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0, total_length: Optional[int] = None
                        ) -> tuple:
    """Undo :func:`pack_padded_sequence`: ``(padded, lengths)`` in the original batch order,
    padded with ``padding_value`` to ``total_length`` steps (default: the longest)."""
    batch_sizes = np.asarray(sequence.batch_sizes.tolist(), dtype=np.int64)
    max_seq_length = len(batch_sizes)
    if total_length is not None:
        if total_length < max_seq_length:
            raise ValueError(f"Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {max_seq_length}")
        max_seq_length = total_length
    data = sequence.data
    rows_total = data.shape[0]
    batch = int(batch_sizes[0])
    offsets = np.concatenate(([0], np.cumsum(batch_sizes)[:-1]))
    member = np.arange(batch)
    sizes_padded = np.concatenate((batch_sizes, np.zeros(max_seq_length - len(batch_sizes),
                                                         dtype=np.int64)))
    offsets_padded = np.concatenate((offsets, np.zeros(max_seq_length - len(offsets),
                                                       dtype=np.int64)))
    rows = np.where(member[None, :] < sizes_padded[:, None],
                    offsets_padded[:, None] + member[None, :], rows_total)
    lengths = (batch_sizes[None, :] > member[:, None]).sum(axis=1)
    if sequence.unsorted_indices is not None:
        unsorted = np.asarray(sequence.unsorted_indices.tolist(), dtype=np.int64)
        rows, lengths = rows[:, unsorted], lengths[unsorted]
    if batch_first:
        rows = rows.T
    filler = hookgrad.full((1,) + tuple(data.shape[1:]), padding_value, dtype=data.dtype)
    padded = hookgrad.cat([data, filler]).index_select(0, _index(rows))
    padded = padded.reshape(rows.shape + tuple(data.shape[1:]))
    return padded, hookgrad.tensor(lengths, dtype=hookgrad.int64)


def pad_sequence(sequences, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Stack sequences ``(L_i, *)`` into ``(T, B, *)`` (``(B, T, *)`` if batch_first), padding
    the shorter ones with ``padding_value`` on ``padding_side`` ("right" or "left"). The result
    has the first sequence's dtype."""
    if not isinstance(sequences, Iterable):
        raise RuntimeError(f"pad_sequence: Expected iterable for input sequences, but got arg "
                           f"of type: {type(sequences)}")
    sequences = tuple(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got "
                           f"{padding_side}.")
    first = sequences[0]
    if any(s.dim() == 0 for s in sequences):
        raise RuntimeError("pad_sequence: every sequence needs at least one dimension (its "
                           "length), got a 0-d tensor")
    trailing = tuple(first.shape[1:])
    for seq in sequences[1:]:
        if tuple(seq.shape[1:]) != trailing:
            _raise_trailing_mismatch(trailing, tuple(seq.shape[1:]))
    lengths = np.asarray([s.shape[0] for s in sequences], dtype=np.int64)
    steps, batch = int(lengths.max()), len(sequences)
    offsets = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    time = np.arange(steps)[None, :]
    start = steps - lengths[:, None] if padding_side == "left" else np.zeros((batch, 1), np.int64)
    inside = (time >= start) & (time < start + lengths[:, None])
    rows = np.where(inside, offsets[:, None] + time - start, int(lengths.sum()))  # (B, T)
    if not batch_first:
        rows = rows.T
    filler = hookgrad.full((1,) + trailing, padding_value, dtype=first.dtype)
    pieces = [s if s.dtype == first.dtype else s.to(first.dtype) for s in sequences]
    padded = hookgrad.cat(pieces + [filler]).index_select(0, _index(rows))
    return padded.reshape(rows.shape + trailing)


def _raise_trailing_mismatch(expected: tuple, got: tuple) -> None:
    if len(expected) != len(got):
        raise RuntimeError(f"pad_sequence: sequences must have the same number of dimensions, "
                           f"got {len(expected) + 1} and {len(got) + 1}")
    for dim, (a, b) in enumerate(zip(expected, got)):
        if a != b:
            raise RuntimeError(f"The size of tensor a ({a}) must match the size of tensor b "
                               f"({b}) at non-singleton dimension {dim + 1}")


def unpad_sequence(padded_sequences: Tensor, lengths, batch_first: bool = False) -> list:
    """Split a padded batch back into its sequences, ``lengths[b]`` steps each.

    Unlike torch, the input is not transposed in place when ``batch_first`` is False."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    max_length = padded_sequences.shape[1]
    steps = hookgrad.arange(max_length)
    return [sequence[steps < int(length)]
            for sequence, length in zip(padded_sequences, _lengths_list(lengths))]


def pack_sequence(sequences: list, enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of sequences ``(L_i, *)`` (decreasing lengths unless enforce_sorted=False)."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list:
    """The list of sequences a :class:`PackedSequence` holds, in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
