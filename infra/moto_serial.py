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

import copy
import os
import threading
from collections import defaultdict

from moto import server
from moto.core.common_models import BaseModel
from moto.dynamodb import models as dynamodb_models
from moto.dynamodb.models import DynamoDBBackend
from moto.dynamodb.models.dynamo_type import DynamoType
from moto.dynamodb.models.table import Table
from moto.moto_server.werkzeug_app import DomainDispatcherApplication

_lock = threading.Lock()
_dispatch = DomainDispatcherApplication.__call__


def _serialised(self, environ, start_response):
    with _lock:
        # moto builds whole responses; materialising the body inside the lock keeps the
        # read of the state and the response that reports it together.
        return list(_dispatch(self, environ, start_response))


DomainDispatcherApplication.__call__ = _serialised


def _untracked(cls, *args, **kwargs):
    return object.__new__(cls)


# moto remembers every model object it ever creates (BaseModel.__new__ appends it to a
# class-level list, for its dashboard) and never lets go. TransactWriteItems deep-copies each
# table it touches as its rollback point, so every transaction leaked a whole copy of the
# conversation and audit tables: measured 2.9 GB after 1,200 transactions, and a load run
# (infra/load.sh) grew moto past 10 GB until requests timed out. Nothing here uses the
# dashboard, so objects are created untracked and the copies are freed (applied below).

# The transaction in progress (requests are serialised, so there is at most one).
_transaction = []
_real_transact = DynamoDBBackend.transact_write_items


def _transact(self, transact_items):
    _transaction[:] = transact_items
    try:
        return _real_transact(self, transact_items)
    finally:
        _transaction.clear()


def _rollback_point(table):
    """What moto's TransactWriteItems keeps to restore `table` if the transaction fails.

    moto deep-copies the whole table, which costs time in proportion to its size on every
    transaction (110 ms per transaction with 2,400 items; a load run stores thousands of
    turns). A transaction changes only the items it names, so this copies the table's item
    index shallowly (the other items are shared, and nothing changes them meanwhile: requests
    are serialised) and deep-copies only those items (an Update changes an item in place).
    """
    point = copy.copy(table)
    point.items = defaultdict(dict)
    for hash_key, bucket in table.items.items():
        point.items[hash_key] = dict(bucket) if table.has_range_key else bucket
    for entry in _transaction:
        _, op = next(iter(entry.items()), (None, {}))
        if not isinstance(op, dict) or op.get("TableName") != table.name:
            continue
        key = op.get("Item") if "Item" in op else op.get("Key")
        hash_value = (key or {}).get(table.hash_key_attr)
        range_value = (key or {}).get(table.range_key_attr) if table.has_range_key else None
        if hash_value is None or (table.has_range_key and range_value is None):
            continue  # moto rejects it before changing anything
        hash_key = DynamoType(hash_value)
        if table.has_range_key:
            range_key = DynamoType(range_value)
            item = table.items.get(hash_key, {}).get(range_key)
            if item is not None:
                point.items[hash_key][range_key] = copy.deepcopy(item)
        elif hash_key in table.items:
            point.items[hash_key] = copy.deepcopy(table.items[hash_key])
    return point


class _CopyForTransactions:
    """Stands in for the `copy` module in moto's DynamoDB backend, whose only use of
    deepcopy on a table is the rollback point of TransactWriteItems."""

    @staticmethod
    def deepcopy(obj, memo=None):
        if isinstance(obj, Table) and _transaction:
            return _rollback_point(obj)
        return copy.deepcopy(obj, memo)

    def __getattr__(self, name):
        return getattr(copy, name)


# Only for long runs (infra/load.sh sets MOTO_LEAN_TRANSACTIONS=1): the tests keep moto's
# own transaction code, so what they check is moto's behaviour, not this patch's.
if os.environ.get("MOTO_LEAN_TRANSACTIONS") == "1":
    BaseModel.__new__ = _untracked
    DynamoDBBackend.transact_write_items = _transact
    dynamodb_models.copy = _CopyForTransactions()


def _exit_when_stdin_closes():
    """Ends the process when its stdin reaches end of file.

    The test harness (shared/src/testing/moto.rs) shares one server among a test binary's
    tests and holds the write end of this pipe; the server is never dropped, but the pipe
    closes when the test process ends, however it ends, and so does the server.
    """
    import sys

    while sys.stdin.buffer.read(65536):
        pass
    os._exit(0)


# Opt-in: a server started in the background of a shell (infra/load.sh) has a stdin that
# may end at once.
if os.environ.get("MOTO_EXIT_ON_STDIN_EOF") == "1":
    threading.Thread(target=_exit_when_stdin_closes, daemon=True).start()

if __name__ == "__main__":
    server.main()
