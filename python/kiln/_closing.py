"""What every kiln object with a close() shares: `with` support, and a
close() when the garbage collector takes one that was never closed."""


class Closing:
    def close(self):
        raise NotImplementedError

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - nothing to report to at collection time
            pass
