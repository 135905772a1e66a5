"""policies/learning/zero_padding.py: the numpy split gives RLlib's rows, item for item."""
from __future__ import annotations

import numpy as np
from ray.rllib.utils.postprocessing.zero_padding import split_and_zero_pad
from ray.rllib.utils.spaces.space_utils import BatchedNdArray

from policies.learning.zero_padding import split_and_zero_pad_fast


def assert_same_rows(got: list, want: list):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if isinstance(w, dict):
            assert set(g) == set(w)
            assert_same_rows([g[k] for k in w], [w[k] for k in w])
        else:
            g, w = np.asarray(g), np.asarray(w)
            assert g.shape == w.shape and g.dtype == w.dtype and np.array_equal(g, w)


def test_individual_items_are_cut_into_zero_padded_rows():
    items = [np.float32(i) for i in range(8)]
    assert_same_rows(split_and_zero_pad_fast(items, 5), split_and_zero_pad(items, 5))
    assert [r.tolist() for r in split_and_zero_pad_fast(items, 5)] == [[0, 1, 2, 3, 4], [5, 6, 7, 0, 0]]


def test_batched_items_of_any_length_and_nested_observations_give_rllibs_rows():
    rng = np.random.default_rng(0)
    for lengths, T in [([2, 4, 3], 5), ([16], 16), ([17], 16), ([1], 4), ([5, 5], 5), ([3, 11, 2, 7], 4)]:
        items = [{"global": BatchedNdArray(rng.normal(size=(n, 3)).astype(np.float32)),
                  "units": BatchedNdArray(rng.normal(size=(n, 2, 4)).astype(np.float32)),
                  "unit_valid": BatchedNdArray(rng.random((n, 2)) < 0.5),
                  "me": BatchedNdArray(rng.integers(0, 5, size=(n, 1)))} for n in lengths]
        assert_same_rows(split_and_zero_pad_fast(items, T), split_and_zero_pad(items, T))
        flat = [BatchedNdArray(rng.normal(size=(n,))) for n in lengths]
        assert_same_rows(split_and_zero_pad_fast(flat, T), split_and_zero_pad(flat, T))


def test_items_it_does_not_recognize_go_to_rllibs_split():
    items = [BatchedNdArray(np.arange(3)), BatchedNdArray(np.arange(4))]
    assert_same_rows(split_and_zero_pad_fast(items, 4), split_and_zero_pad(items, 4))
    odd = [{"a": BatchedNdArray(np.arange(3)), "b": BatchedNdArray(np.arange(2))}]  # leaves of different lengths
    assert_same_rows(split_and_zero_pad_fast(odd, 4), split_and_zero_pad(odd, 4))


def test_episodes_padded_by_one_scatter_give_rllibs_rows():
    from ray.rllib.utils.postprocessing.zero_padding import split_and_zero_pad_n_episodes

    from policies.learning.zero_padding import pad_episodes
    rng = np.random.default_rng(1)
    for lengths, T in [([2, 4, 3], 5), ([16], 16), ([17], 16), ([1], 4), ([5, 5], 5), ([3, 11, 2, 7], 4)]:
        for shape, dtype in [((), np.float32), ((3,), np.float64), ((), np.int64)]:
            data = (rng.normal(size=(sum(lengths),) + shape) * 10).astype(dtype)
            want = np.stack(split_and_zero_pad_n_episodes(data, episode_lens=lengths, max_seq_len=T), axis=0)
            got = pad_episodes(data, lengths, T)
            assert got.shape == want.shape and got.dtype == want.dtype and np.array_equal(got, want)
    assert pad_episodes(np.arange(1, 6), [2, 3], 4).tolist() == [[1, 2, 0, 0], [3, 4, 5, 0]]
