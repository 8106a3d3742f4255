"""Collectives whose tensors differ between ranks fail on every rank (2 MPI ranks).

torch's gloo fails such a job; MPI alone would complete it with garbage (4 elements
against 2 gave rank 0 [2, 2, 1, 1] and exit 0). Each job runs with a timeout: a hang
fails the test.
"""
import re

from _dist_launch import assert_ok, launch

EXPECT = {
    "shape": ["rank 0 runs all_reduce(shape=[4], dtype=float32, op=SUM), "
              "rank 1 runs all_reduce(shape=[2], dtype=float32, op=SUM)"],
    "dtype": ["rank 0 runs all_reduce(shape=[3], dtype=float32, op=SUM), "
              "rank 1 runs all_reduce(shape=[3], dtype=float64, op=SUM)"],
    "op": ["rank 0 runs all_reduce(shape=[3], dtype=float32, op=MAX), "
           "rank 1 runs all_reduce(shape=[3], dtype=float32, op=SUM)"],
    "broadcast": ["rank 0 runs broadcast(shape=[2, 2], dtype=float32, src=0), "
                  "rank 1 runs broadcast(shape=[2, 3], dtype=float32, src=0)"],
    "all_gather": ["rank 0 runs all_gather(shape=[1]", "rank 1 runs all_gather(shape=[2]"],
    "reduce": ["rank 0 runs reduce(shape=[3], dtype=int32, op=SUM, dst=0), "
               "rank 1 runs reduce(shape=[3], dtype=int64, op=SUM, dst=0)"],
    "gather_dst": ["rank 0 runs gather(shape=[2], dtype=float32, dst=0), "
                   "rank 1 runs gather(shape=[2], dtype=float32, dst=1)"],
    "reduce_scatter_tensor": ["rank 0 runs reduce_scatter_tensor(shape=[4], dtype=float32",
                              "rank 1 runs reduce_scatter_tensor(shape=[4], dtype=float64"],
    "all_to_all_single": ["rank 0 runs all_to_all_single(dtype=float32), "
                          "rank 1 runs all_to_all_single(dtype=float64)"],
}


def test_mismatched_collectives_raise_on_every_rank_and_the_group_survives(tmp_path):
    p = launch(2, "mismatch.py", "caught", cwd=tmp_path, timeout=180)
    assert_ok(p, 2)
    assert "silent" not in p.stdout, p.stdout
    # (mpiexec may join two ranks' lines: match the messages, not the lines)
    got = {(int(r), case): msg for r, case, msg in re.findall(
        r"raised (\d) (\w+): (.*?to a collective\.)", p.stdout)}
    for case, parts in EXPECT.items():
        for rank in (0, 1):
            msg = got.get((rank, case))
            assert msg, f"{case} did not raise on rank {rank}:\n{p.stdout}"
            assert "Detected mismatch between collectives on ranks" in msg
            for part in parts:
                assert part in msg, msg


def test_uncaught_mismatch_fails_the_job(tmp_path):
    p = launch(2, "mismatch.py", "uncaught", cwd=tmp_path, timeout=120)
    assert p.returncode != 0, p.stdout + p.stderr
    assert "finished" not in p.stdout
    assert ("all_reduce: Detected mismatch between collectives on ranks: rank 0 runs "
            "all_reduce(shape=[4], dtype=float32, op=SUM), rank 1 runs "
            "all_reduce(shape=[2], dtype=float32, op=SUM)") in p.stderr, p.stderr
