"""Search's matrix-vector products run on one BLAS thread: idle OpenBLAS workers spin after each product and
take the core the next query embedding needs."""

from threadpoolctl import threadpool_info

from petrichor_serving.recall import dense


def test_loading_the_vector_module_limits_blas_to_its_setting():
    blas = [pool for pool in threadpool_info() if pool["user_api"] == "blas"]
    assert blas, "numpy is linked against a BLAS library"
    assert all(pool["num_threads"] == dense.BLAS_THREADS for pool in blas)
