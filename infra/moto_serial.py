"""moto_server, with each request applied to moto's state one at a time.

DynamoDB applies a conditional update atomically: of many concurrent `ADD n :one IF n <= :t`
calls on one item, exactly as many succeed as fit. moto's threaded server evaluates the
condition and writes the item in Python without a lock, so concurrent calls can both pass
the check and one increment can overwrite the other (measured with 50 threads at a limit of
10: 11 and 13 admitted). The tests of the rate limiter rely on DynamoDB's guarantee, so the
test harness starts moto through this wrapper, which serialises the backend behind one lock
while the HTTP server itself stays threaded.

Usage: python infra/moto_serial.py [moto_server options]   (same options as moto_server)
"""

import threading

from moto import server
from moto.moto_server.werkzeug_app import DomainDispatcherApplication

_lock = threading.Lock()
_dispatch = DomainDispatcherApplication.__call__


def _serialised(self, environ, start_response):
    with _lock:
        # moto builds whole responses; materialising the body inside the lock keeps the
        # read of the state and the response that reports it together.
        return list(_dispatch(self, environ, start_response))


DomainDispatcherApplication.__call__ = _serialised

if __name__ == "__main__":
    server.main()
