"""VectorIndex: exact and IVF search against an independent brute force, filters, updates,
saved state, and errors. Data is a seeded Gaussian mixture on the unit sphere."""

from __future__ import annotations

import pytest

np = pytest.importorskip("numpy")

from precis.errors import ConfigError, EmbeddingError, InputError, QueryError  # noqa: E402
from precis.memory.vectors import VectorIndex  # noqa: E402

DIM = 32
K = 10


class Mixture:
    """Clusters on the sphere; points at cosine ~0.8 from their cluster centre."""

    def __init__(self, seed: int, clusters: int = 40) -> None:
        self.rng = np.random.default_rng(seed)
        c = self.rng.standard_normal((clusters, DIM))
        self.centres = c / np.linalg.norm(c, axis=1, keepdims=True)

    def draw(self, n: int, cluster: int | None = None) -> np.ndarray:
        which = (self.rng.integers(0, len(self.centres), n) if cluster is None
                 else np.full(n, cluster))
        x = self.centres[which] + 0.13 * self.rng.standard_normal((n, DIM))
        return x.astype(np.float32)


def brute(x: np.ndarray, ids: np.ndarray, q: np.ndarray, k: int,
          allowed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Reference top-k in float64: cosine, best first, ties by smaller id."""
    x64 = x.astype(np.float64)
    q64 = np.asarray(q, dtype=np.float64)
    scores = (x64 / np.linalg.norm(x64, axis=1, keepdims=True)) @ (q64 / np.linalg.norm(q64))
    keep = np.ones(len(ids), bool) if allowed is None else np.isin(ids, allowed)
    s, i = scores[keep], ids[keep]
    order = np.lexsort((i, -s))[:k]
    return i[order], s[order]


def brute_ids(x: np.ndarray, ids: np.ndarray, queries: np.ndarray, k: int,
              allowed: np.ndarray | None = None) -> np.ndarray:
    """Reference top-k ids of many queries at once (for recall: order does not matter)."""
    x64 = x.astype(np.float64)
    q64 = queries.astype(np.float64)
    scores = (q64 / np.linalg.norm(q64, axis=1, keepdims=True)) @ (
        x64 / np.linalg.norm(x64, axis=1, keepdims=True)).T
    if allowed is not None:
        scores[:, ~np.isin(ids, allowed)] = -np.inf
    return ids[np.argpartition(-scores, k - 1, axis=1)[:, :k]]


def assert_exact(got_ids, got_scores, ref_ids, ref_scores) -> None:
    """Same results as the reference (up to float32 rounding among near-ties)."""
    assert got_ids.dtype == np.int64 and got_scores.dtype == np.float32
    assert len(got_ids) == len(ref_ids)
    np.testing.assert_allclose(got_scores, ref_scores, atol=2e-5)
    if len(ref_scores) > 1:
        gaps = np.diff(ref_scores)
        clear = np.ones(len(ref_ids), bool)
        clear[:-1] &= gaps < -1e-4
        clear[1:] &= gaps < -1e-4
        assert np.array_equal(got_ids[clear], ref_ids[clear])
    else:
        assert np.array_equal(got_ids, ref_ids)


def recall(found: np.ndarray, truth: np.ndarray) -> float:
    return sum(len(set(f) & set(t)) for f, t in zip(found.tolist(), truth.tolist())) / truth.size


@pytest.fixture(scope="module")
def clustered():
    mix = Mixture(seed=7)
    x = mix.draw(12_000)
    ids = np.arange(12_000, dtype=np.int64) * 3 + 5  # sparse, like row ids after deletes
    queries = mix.draw(150)
    return mix, x, ids, queries


@pytest.fixture(scope="module")
def trained(clustered):
    _, x, ids, _ = clustered
    index = VectorIndex(DIM, ivf_threshold=5_000, exact_max=500)
    index.add(ids, x)
    return index


# -- exact search -------------------------------------------------------------------------


def test_exact_search_matches_brute_force() -> None:
    mix = Mixture(seed=1)
    x = mix.draw(3_000) * np.random.default_rng(2).uniform(0.1, 10, (3_000, 1))  # any norm
    ids = np.random.default_rng(3).permutation(10_000)[:3_000].astype(np.int64)
    index = VectorIndex(DIM)
    index.add(ids, x)
    assert len(index) == 3_000 and not index.trained
    for q in mix.draw(20):
        for k in (1, K, 57):
            assert_exact(*index.search(q, k), *brute(x, ids, q, k))
        got_ids, got_scores = index.search(q * 42.0, K)  # the query's norm does not matter
        assert_exact(got_ids, got_scores, *brute(x, ids, q, K))
    assert 0.999 < float(index.search(x[5], 1)[1][0]) <= 1.0001  # a cosine, not a dot


def test_search_many_equals_search(trained, clustered) -> None:
    queries = clustered[3]
    many_ids, many_scores = trained.search_many(queries[:30], K)
    assert many_ids.shape == many_scores.shape == (30, K)
    for row, q in enumerate(queries[:30]):
        one_ids, one_scores = trained.search(q, K)
        assert np.array_equal(one_ids, many_ids[row])
        np.testing.assert_allclose(one_scores, many_scores[row], atol=1e-6)


# -- IVF ------------------------------------------------------------------------------------


def test_ivf_recall_at_calibrated_nprobe(trained, clustered) -> None:
    _, x, ids, queries = clustered
    assert trained.trained and trained.nlist == round(12_000**0.5)
    assert 1 <= trained.nprobe < trained.nlist
    truth = brute_ids(x, ids, queries, K)
    found, _ = trained.search_many(queries, K)
    assert recall(found, truth) >= 0.95
    # one list is not enough on this data: the calibration is what gets recall up
    single, _ = trained.search_many(queries, K, nprobe=1)
    assert recall(single, truth) < recall(found, truth)


def test_ivf_with_every_list_probed_is_exact(trained, clustered) -> None:
    _, x, ids, queries = clustered
    for q in queries[:25]:
        assert_exact(*trained.search(q, K, nprobe=trained.nlist), *brute(x, ids, q, K))


def test_index_trains_when_it_grows_and_stays_exact_at_full_probe() -> None:
    mix = Mixture(seed=11)
    x = mix.draw(9_000)
    ids = np.arange(9_000, dtype=np.int64)
    index = VectorIndex(DIM, ivf_threshold=2_000, exact_max=100)
    index.add(ids[:1_500], x[:1_500])
    assert not index.trained
    index.add(ids[1_500:2_500], x[1_500:2_500])
    assert index.trained
    first_nlist = index.nlist
    for start in range(2_500, 9_000, 700):  # vectors added to their nearest lists ...
        index.add(ids[start : start + 700], x[start : start + 700])
    assert len(index) == 9_000
    assert index.nlist > first_nlist  # ... and a retrain once it had grown enough
    queries = mix.draw(100)
    truth = brute_ids(x, ids, queries, K)
    assert recall(index.search_many(queries, K)[0], truth) >= 0.95
    for q in queries[:10]:
        assert_exact(*index.search(q, K, nprobe=index.nlist), *brute(x, ids, q, K))


# -- allowed ids ------------------------------------------------------------------------


def test_allowed_small_is_exact_over_those_ids(trained, clustered) -> None:
    _, x, ids, queries = clustered
    rng = np.random.default_rng(5)
    allowed = np.sort(np.concatenate([rng.choice(ids, 300, replace=False), [1, 2, 4]]))
    for q in queries[:20]:
        got = trained.search(q, K, allowed=allowed)
        assert np.isin(got[0], allowed).all()
        assert_exact(*got, *brute(x, ids, q, K, allowed))
    few = np.array([ids[3], ids[99], 2], dtype=np.int64)  # 2 is not in the index
    got_ids, _ = trained.search(queries[0], K, allowed=few)
    assert sorted(got_ids.tolist()) == sorted([int(ids[3]), int(ids[99])])


def test_allowed_large_is_masked_inside_the_ivf(trained, clustered) -> None:
    _, x, ids, queries = clustered
    allowed = np.sort(np.random.default_rng(6).choice(ids, 4_000, replace=False))  # > exact_max
    found, _ = trained.search_many(queries, K, allowed=allowed)
    assert found.shape == (len(queries), K)
    assert np.isin(found, allowed).all()
    truth = brute_ids(x, ids, queries, K, allowed)
    assert recall(found, truth) >= 0.95
    for q in queries[:10]:
        assert_exact(*trained.search(q, K, allowed=allowed, nprobe=trained.nlist),
                     *brute(x, ids, q, K, allowed))


def test_allowed_far_from_the_query_still_gives_k_results(clustered) -> None:
    mix, _, _, _ = clustered
    near, far = mix.draw(6_000, cluster=0), mix.draw(1_000, cluster=1)
    x = np.concatenate([near, far])
    ids = np.arange(len(x), dtype=np.int64)
    index = VectorIndex(DIM, ivf_threshold=2_000, exact_max=100)
    index.add(ids, x)
    allowed = ids[6_000:]  # only the far cluster, none of it in the query's lists
    q = mix.draw(1, cluster=0)[0]
    got_ids, _ = index.search(q, K, allowed=allowed)
    assert len(got_ids) == K and np.isin(got_ids, allowed).all()
    ref_ids, _ = brute(x, ids, q, 200, allowed)
    assert np.isin(got_ids, ref_ids).all()  # among the best allowed, not just any


def test_allowed_unsorted_duplicates_and_empty(trained, clustered) -> None:
    _, _, ids, queries = clustered
    allowed = np.array([ids[50], ids[7], ids[50], ids[900], ids[7]])
    got_ids, _ = trained.search(queries[1], K, allowed=allowed)
    assert sorted(got_ids.tolist()) == sorted({int(ids[50]), int(ids[7]), int(ids[900])})
    got_ids, got_scores = trained.search(queries[1], K, allowed=np.array([], dtype=np.int64))
    assert got_ids.size == 0 and got_scores.size == 0
    m_ids, _ = trained.search_many(queries[:3], K, allowed=np.array([-1, 0, 1]))
    assert m_ids.shape == (3, 0)


# -- updates ----------------------------------------------------------------------------


@pytest.mark.parametrize("threshold", [100_000, 1_000], ids=["exact", "ivf"])
def test_add_replace_remove(threshold: int) -> None:
    mix = Mixture(seed=21)
    x = mix.draw(4_000)
    ids = np.arange(100, 4_100, dtype=np.int64)
    index = VectorIndex(DIM, ivf_threshold=threshold, exact_max=50)
    index.add(ids, x)
    assert index.trained == (threshold == 1_000)
    q = mix.draw(1)[0]

    # replace: id 100 now holds the query itself; repeated ids in one call: the last wins
    index.add(np.array([100, 101, 101]), np.stack([q, -q, q * 3]))
    x[0], x[1] = q, q
    assert len(index) == 4_000
    got_ids, got_scores = index.search(q, 2)
    assert sorted(got_ids.tolist()) == [100, 101]
    np.testing.assert_allclose(got_scores, [1.0, 1.0], atol=1e-5)

    # remove: gone from every search, unknown ids ignored, count returned
    gone = np.concatenate([[100, 101], np.arange(2_000, 3_000), [999_999]])
    assert index.remove(gone) == 1_002
    assert index.remove(np.array([100])) == 0
    assert len(index) == 2_998 and 100 not in index and 150 in index
    keep = ~np.isin(ids, gone)
    for query in (q, *mix.draw(5)):
        got_ids, got_scores = index.search(query, K, nprobe=max(1, index.nlist))
        assert not np.isin(got_ids, gone).any()
        assert_exact(got_ids, got_scores, *brute(x[keep], ids[keep], query, K))
    assert np.array_equal(index.ids(), ids[keep])

    # re-add some removed ids
    index.add(np.arange(2_000, 2_010), x[1_900:1_910])
    assert len(index) == 3_008 and 2_005 in index


def test_shrinking_below_half_the_threshold_goes_back_to_exact() -> None:
    mix = Mixture(seed=31)
    x = mix.draw(3_000)
    ids = np.arange(3_000, dtype=np.int64)
    index = VectorIndex(DIM, ivf_threshold=2_000)
    index.add(ids, x)
    assert index.trained
    index.remove(ids[:2_100])
    assert not index.trained and index.nlist == 0 and index.nprobe is None
    for q in mix.draw(5):
        assert_exact(*index.search(q, K), *brute(x[2_100:], ids[2_100:], q, K))


def test_many_small_adds_and_removes_stay_consistent() -> None:
    """Lists outgrow their room and move; holes are compacted; answers stay exact."""
    mix = Mixture(seed=41)
    x = mix.draw(9_000)
    ids = np.arange(9_000, dtype=np.int64)
    index = VectorIndex(DIM, ivf_threshold=2_000, retrain_growth=100.0)
    index.add(ids[:2_000], x[:2_000])
    alive = np.zeros(9_000, bool)
    alive[:2_000] = True
    rng = np.random.default_rng(42)
    for start in range(2_000, 9_000, 250):
        index.add(ids[start : start + 250], x[start : start + 250])
        alive[start : start + 250] = True
        drop = rng.choice(np.flatnonzero(alive), 60, replace=False)
        index.remove(ids[drop])
        alive[drop] = False
    assert len(index) == alive.sum() and np.array_equal(index.ids(), ids[alive])
    for q in mix.draw(5):
        assert_exact(*index.search(q, K, nprobe=index.nlist),
                     *brute(x[alive], ids[alive], q, K))


# -- edge cases -------------------------------------------------------------------------


def test_empty_index_and_k_beyond_n() -> None:
    index = VectorIndex(DIM)
    got_ids, got_scores = index.search(np.ones(DIM), K)
    assert got_ids.shape == (0,) and got_ids.dtype == np.int64 and got_scores.dtype == np.float32
    assert index.search_many(np.ones((3, DIM)), K)[0].shape == (3, 0)
    assert index.remove([1, 2]) == 0
    index.add(np.array([], dtype=np.int64), np.empty((0, DIM)))
    assert len(index) == 0

    mix = Mixture(seed=51)
    x = mix.draw(7)
    index.add(np.arange(7), x)
    got_ids, _ = index.search(x[0], 50)
    assert sorted(got_ids.tolist()) == list(range(7))
    assert index.search(x[0], 0)[0].size == 0
    assert index.search_many(x[:2], 50)[0].shape == (2, 7)


# -- saved state ------------------------------------------------------------------------


def test_state_round_trip_gives_identical_results(small) -> None:
    index, x, ids, queries = small
    state = index.export_state()
    order = np.random.default_rng(8).permutation(len(ids))  # the store may load in any order
    # a different seed: a retrain would give other centroids, a restore keeps them
    restored = VectorIndex.from_state(state, ids[order], x[order], ivf_threshold=1_000,
                                      exact_max=100, seed=99)
    assert restored.nlist == index.nlist and restored.nprobe == index.nprobe
    a = index.search_many(queries, K)
    b = restored.search_many(queries, K)
    assert np.array_equal(a[0], b[0])
    np.testing.assert_allclose(a[1], b[1], atol=1e-6)
    retrained = VectorIndex(DIM, ivf_threshold=1_000, exact_max=100, seed=99)
    retrained.add(ids[order], x[order])
    assert not np.array_equal(retrained.search_many(queries, K, nprobe=1)[0],
                              index.search_many(queries, K, nprobe=1)[0])


def test_state_with_new_and_changed_vectors(trained, clustered) -> None:
    mix, x, ids, queries = clustered
    state = trained.export_state()
    x2 = x.copy()
    changed = np.arange(0, 12_000, 120)  # 1% re-embedded: far from where they were
    x2[changed] = mix.draw(len(changed))
    extra_ids = np.arange(1, 301, dtype=np.int64) * 3 + 1  # ids the state never saw
    extra = mix.draw(300)
    all_ids = np.concatenate([ids, extra_ids])
    all_x = np.concatenate([x2, extra])
    restored = VectorIndex.from_state(state, all_ids, all_x, ivf_threshold=5_000, exact_max=500)
    assert len(restored) == 12_300 and restored.nlist == trained.nlist
    # every changed or new vector is findable where it now is (it was put in the right list)
    for row in (*changed[:20], *range(12_000, 12_020)):
        got_ids, got_scores = restored.search(all_x[row], 1)
        assert got_ids[0] == all_ids[row] and got_scores[0] > 0.9999
    truth = brute_ids(all_x, all_ids, queries, K)
    assert recall(restored.search_many(queries, K)[0], truth) >= 0.95


@pytest.fixture(scope="module")
def small(clustered):
    mix, _, _, queries = clustered
    x = mix.draw(4_000)
    ids = np.arange(4_000, dtype=np.int64)
    index = VectorIndex(DIM, ivf_threshold=1_000, exact_max=100)
    index.add(ids, x)
    return index, x, ids, queries


def test_k_beyond_n_on_a_trained_index(small) -> None:
    index, x, ids, queries = small
    assert index.trained
    got_ids, got_scores = index.search(queries[0], 5_000)  # more than the 4,000 vectors
    assert sorted(got_ids.tolist()) == ids.tolist()
    assert np.all(np.diff(got_scores) <= 0)
    assert_exact(got_ids[:50], got_scores[:50], *brute(x, ids, queries[0], 50))
    many_ids, _ = index.search_many(queries[:3], 3_999)
    assert many_ids.shape == (3, 3_999)


@pytest.mark.parametrize("damage", ["truncated", "flipped", "empty", "garbage", "not bytes"])
def test_corrupt_state_falls_back_to_a_clean_build(small, damage: str) -> None:
    index, x, ids, queries = small
    state = index.export_state()
    bad = {
        "truncated": state[: len(state) // 2],
        "flipped": state[:100] + bytes([state[100] ^ 0xFF]) + state[101:],
        "empty": b"",
        "garbage": b"PRECISVI" + bytes(200),
        "not bytes": None,
    }[damage]
    restored = VectorIndex.from_state(bad, ids, x, ivf_threshold=1_000, exact_max=100)
    assert restored.trained and len(restored) == len(ids)
    truth = brute_ids(x, ids, queries, K)
    assert recall(restored.search_many(queries, K)[0], truth) >= 0.95


def test_mismatched_state_is_not_used(small, clustered) -> None:
    mix = clustered[0]
    index, x, ids, queries = small
    state = index.export_state()
    # a state of 32-d vectors for 16-d vectors: a clean build
    small = VectorIndex.from_state(state, np.arange(10), np.ones((10, 16)))
    assert small.dim == 16 and not small.trained and len(small) == 10
    # all vectors re-embedded (another model, same dimension): retrained, not misplaced
    other = mix.draw(len(ids))
    restored = VectorIndex.from_state(state, ids, other, ivf_threshold=1_000, exact_max=100)
    truth = brute_ids(other, ids, queries, K)
    assert recall(restored.search_many(queries, K)[0], truth) >= 0.95
    # a state of other ids entirely: retrained as well
    restored = VectorIndex.from_state(state, ids + 1, x, ivf_threshold=1_000, exact_max=100)
    truth = brute_ids(x, ids + 1, queries, K)
    assert recall(restored.search_many(queries, K)[0], truth) >= 0.95


def test_untrained_state_round_trips_to_an_exact_index() -> None:
    mix = Mixture(seed=61)
    x = mix.draw(500)
    ids = np.arange(500, dtype=np.int64)
    index = VectorIndex(DIM)
    index.add(ids, x)
    restored = VectorIndex.from_state(index.export_state(), ids, x)
    assert not restored.trained and len(restored) == 500
    q = mix.draw(1)[0]
    assert_exact(*restored.search(q, K), *brute(x, ids, q, K))


def test_same_seed_same_index(clustered) -> None:
    _, x, ids, _ = clustered
    a = VectorIndex(DIM, ivf_threshold=1_000, seed=3)
    b = VectorIndex(DIM, ivf_threshold=1_000, seed=3)
    a.add(ids[:3_000], x[:3_000])
    b.add(ids[:3_000], x[:3_000])
    assert a.trained
    assert a.export_state() == b.export_state()


# -- errors -----------------------------------------------------------------------------


def test_bad_queries_raise_query_error(trained) -> None:
    with pytest.raises(QueryError, match=r"shape \(31,\).*32-dimensional"):
        trained.search(np.ones(31), K)
    with pytest.raises(QueryError, match="NaN or infinite") as err:
        trained.search(np.full(DIM, np.nan), K)
    assert err.value.where == "query"
    with pytest.raises(QueryError, match="all zeros"):
        trained.search(np.zeros(DIM), K)
    with pytest.raises(QueryError, match="NaN") as err:
        trained.search_many(np.stack([np.ones(DIM), np.full(DIM, np.inf)]), K)
    assert err.value.where == "query 1"
    with pytest.raises(QueryError, match="shape"):
        trained.search(np.ones((2, DIM)), K)
    with pytest.raises(QueryError, match="numbers"):
        trained.search(np.array(["a"] * DIM), K)
    for k in (-1, True, 2.5):
        with pytest.raises(QueryError, match="k must be"):
            trained.search(np.ones(DIM), k)
    with pytest.raises(QueryError, match="integer card ids"):
        trained.search(np.ones(DIM), K, allowed=np.array([1.5, 2.0]))
    with pytest.raises(QueryError, match="1-D"):
        trained.search(np.ones(DIM), K, allowed=np.array([[1, 2]]))
    with pytest.raises(QueryError, match="nprobe"):
        trained.search(np.ones(DIM), K, nprobe=0)


def test_bad_vectors_and_options() -> None:
    index = VectorIndex(DIM)
    with pytest.raises(ConfigError, match=r"31 dimensions.*32-dimensional"):
        index.add([1, 2], np.ones((2, 31)))
    bad = np.ones((3, DIM))
    bad[1, 4] = np.nan
    with pytest.raises(EmbeddingError, match="id 8 contains NaN"):
        index.add([7, 8, 9], bad)
    with pytest.raises(EmbeddingError, match="id 9 is all zeros"):
        index.add([7, 9], np.stack([np.ones(DIM), np.zeros(DIM)]))
    with pytest.raises(EmbeddingError, match="3 ids but 2 vectors"):
        index.add([1, 2, 3], np.ones((2, DIM)))
    with pytest.raises(InputError, match="integers"):
        index.add([1.5, 2.5], np.ones((2, DIM)))
    assert len(index) == 0  # nothing half-added
    for options in ({"ivf_threshold": 1}, {"exact_max": -1}, {"nlist": 0},
                    {"recall_target": 1.5}, {"retrain_growth": 1.0}, {"seed": -1}):
        with pytest.raises(ConfigError):
            VectorIndex(DIM, **options)
    with pytest.raises(ConfigError, match="dim"):
        VectorIndex(0)
