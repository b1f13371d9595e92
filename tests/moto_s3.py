"""moto's S3 server mode on 127.0.0.1 as the S3 endpoint of fsspec, for the remote-storage tests."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

import pytest


@contextmanager
def moto_s3() -> Iterator[Any]:
    """An ``s3fs.S3FileSystem`` on a fresh moto server that every ``s3://`` URL reaches while the
    block runs (through ``fsspec.config.conf``: how a user points s3fs at another endpoint, or
    ``FSSPEC_S3_ENDPOINT_URL``); the previous configuration is put back after it."""
    pytest.importorskip("s3fs")
    moto_server = pytest.importorskip("moto.server")
    import fsspec
    import s3fs

    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    options = {"endpoint_url": f"http://{host}:{port}", "key": "testing", "secret": "testing"}
    saved = fsspec.config.conf.get("s3")
    fsspec.config.conf["s3"] = options
    try:
        yield s3fs.S3FileSystem(**options)
    finally:
        s3fs.S3FileSystem.clear_instance_cache()
        if saved is None:
            fsspec.config.conf.pop("s3", None)
        else:
            fsspec.config.conf["s3"] = saved
        server.stop()
