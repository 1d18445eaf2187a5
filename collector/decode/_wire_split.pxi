# Included by _wire.pyx: the wire split of ``collector.receivers.wire_split``, compiled.
#
# Why: with ``pipeline.workers > 1`` the front process splits every request by trace
# id; measured in the running daemon the interpreted split was a quarter of the
# front's time, and the front caps how many workers one daemon feeds (ADR 0018).
#
# Contract, relied on by ``wire_split._split``: for a payload whose every varint ends
# within its message (in at most ten bytes), every length within its message and
# every wire type one of 0, 1, 2, 5, ``split_walk`` returns exactly what the Python
# walk (``wire_split._walk``) returns; for anything else it raises ``Unusual`` and the
# caller runs the Python walk, which splits or hands the payload over whole.
# ``tests/unit/receivers/test_wire_split_native.py`` compares the two on synthetic
# requests, logs, fuzzed payloads and every golden capture. It reads with ``_Wire``'s
# primitives, as the record walk does.

from cpython.mem cimport PyMem_Free, PyMem_Realloc

cdef uint32_t _crc_table[256]


cdef void _crc_init() noexcept:
    cdef uint32_t c
    cdef int n, k
    for n in range(256):
        c = n
        for k in range(8):
            c = (0xEDB88320 ^ (c >> 1)) if c & 1 else (c >> 1)
        _crc_table[n] = c


_crc_init()


cdef inline uint32_t _crc32(const unsigned char* p, Py_ssize_t n) noexcept:
    """``zlib.crc32`` (CRC-32/ISO-HDLC, the one ``wire_split.shard_of`` uses)."""
    cdef uint32_t c = 0xFFFFFFFF
    cdef Py_ssize_t i
    for i in range(n):
        c = _crc_table[(c ^ p[i]) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def crc32(const unsigned char[::1] data):
    """``_crc32`` for tests: must equal ``zlib.crc32``."""
    return _crc32(&data[0] if data.shape[0] else NULL, data.shape[0])


cdef struct SplitItem:
    Py_ssize_t shard
    Py_ssize_t first
    Py_ssize_t after


cdef struct SplitField:
    Py_ssize_t number
    int wire
    Py_ssize_t value  # where the value starts (after a length prefix)
    Py_ssize_t after  # the position after the field


cdef Py_ssize_t _varint_size(Py_ssize_t value) noexcept:
    cdef Py_ssize_t n = 1
    while value >= 0x80:
        value >>= 7
        n += 1
    return n


cdef bytes _new_field(unsigned char tag, Py_ssize_t size):
    """A new bytes object holding a length-delimited field (``tag``, ``size``), its
    value not written yet: it starts at ``_value_at``. One allocation, no copy."""
    cdef bytes made = PyBytes_FromStringAndSize(NULL, 1 + _varint_size(size) + size)
    cdef char* at = <char*>made
    at[0] = <char>tag
    at += 1
    while size >= 0x80:
        at[0] = <char>(size & 0x7F | 0x80)
        size >>= 7
        at += 1
    at[0] = <char>size
    return made


cdef inline char* _value_at(bytes field, Py_ssize_t size) noexcept:
    return <char*>field + 1 + _varint_size(size)


cdef class _Splitter(_Wire):
    """One payload's split: the item table of the resource being split, and counts."""

    cdef bytes data
    cdef Py_ssize_t count
    cdef int trace_field
    cdef list counts
    cdef SplitItem* items
    cdef Py_ssize_t used, capacity

    def __dealloc__(self):
        PyMem_Free(self.items)

    cdef int _field(self, Py_ssize_t pos, Py_ssize_t end, SplitField* field) except -1:
        """The field at ``pos``: its number (-1 past an int's range: never one sought),
        wire type and value; ``Unusual`` for a group or anything past ``end``."""
        cdef uint64_t key
        pos = self.strict_varint(pos, end, &key)
        field.number = <Py_ssize_t>(key >> 3) if key >> 3 < 0x7FFFFFFF else -1
        field.wire = <int>(key & 7)
        if field.wire == LEN:
            field.value = self.length(pos, end, &field.after)
        else:
            field.value = pos
            field.after = self.skip(pos, end, field.wire)
        return 0

    cdef int _push(self, Py_ssize_t shard, Py_ssize_t first, Py_ssize_t after) except -1:
        cdef SplitItem* grown
        if self.used == self.capacity:
            self.capacity = self.capacity * 2 if self.capacity else 256
            grown = <SplitItem*>PyMem_Realloc(self.items, self.capacity * sizeof(SplitItem))
            if grown == NULL:
                raise MemoryError()
            self.items = grown
        self.items[self.used].shard = shard
        self.items[self.used].first = first
        self.items[self.used].after = after
        self.used += 1
        return 0

    cdef Py_ssize_t _owner(self, Py_ssize_t start, Py_ssize_t end) except -1:
        """The shard of the item in [start, end): the crc32 of its last trace id field."""
        cdef const unsigned char* d = self.buf
        cdef SplitField field
        cdef Py_ssize_t found = -1, found_end = -1, pos = start
        if (
            self.trace_field == 1 and end - start >= 18 and d[start] == 0x0A and d[start + 1] == 16
        ):
            # The usual encoding, the trace id first: taken without reading further,
            # as the Python walk does.
            return _crc32(d + start + 2, 16) % self.count
        while pos < end:
            self._field(pos, end, &field)
            if field.number == self.trace_field and field.wire == LEN:
                found, found_end = field.value, field.after
            pos = field.after
        if found < 0:
            return _crc32(NULL, 0) % self.count
        return _crc32(d + found, found_end - found) % self.count

    cdef tuple _scope(self, Py_ssize_t start, Py_ssize_t end):
        """(the scope's non-item fields, the first and last index of its items)."""
        cdef const unsigned char* d = self.buf
        cdef SplitField field
        cdef Py_ssize_t pos = start, field_start, shard, first_item = self.used
        head = []
        while pos < end:
            field_start = pos
            self._field(pos, end, &field)
            if field.number == 2 and field.wire == LEN and d[field_start] == 0x12:
                shard = self._owner(field.value, field.after)
                self.counts[shard] += 1
                self._push(shard, field_start, field.after)
            else:
                head.append(self.data[field_start:field.after])
            pos = field.after
        return b"".join(head), first_item, self.used

    cdef list _resource(self, Py_ssize_t start, Py_ssize_t end):
        """``wire_split._split_resource``."""
        cdef SplitField field
        cdef Py_ssize_t pos = start, field_start, i, shard, k
        head = []
        scopes = []
        self.used = 0
        while pos < end:
            field_start = pos
            self._field(pos, end, &field)
            if field.number == 2 and field.wire == LEN:
                scopes.append(self._scope(field.value, field.after))
            else:
                head.append(self.data[field_start:field.after])
            pos = field.after
        seen = [False] * self.count
        shards = 0
        for i in range(self.used):
            if not seen[self.items[i].shard]:
                seen[self.items[i].shard] = True
                shards += 1
        if shards <= 1:
            return [(k, None) for k in range(self.count) if seen[k]]
        out = []
        for shard in range(self.count):
            if seen[shard]:
                out.append((shard, self._shard_resource(shard, head, scopes)))
        return out

    cdef bytes _shard_resource(self, Py_ssize_t shard, list head, list scopes):
        """The ``resource_spans`` field of ``shard``: the resource's other fields, then
        each scope that holds items of ``shard`` with those items, in order (what
        ``wire_split._split_resource`` joins; written once, not joined twice)."""
        cdef bytes chunk
        cdef Py_ssize_t size = 0
        cdef char* at
        body = list(head)
        for scope_head, first_item, last_item in scopes:
            chunk = self._shard_scope(shard, scope_head, first_item, last_item)
            if chunk is not None:
                body.append(chunk)
        for chunk in body:
            size += len(chunk)
        chunk = _new_field(0x0A, size)
        at = _value_at(chunk, size)
        for piece in body:
            memcpy(at, <char*>(<bytes>piece), len(<bytes>piece))
            at += len(<bytes>piece)
        return chunk

    cdef object _shard_scope(
        self, Py_ssize_t shard, bytes scope_head, Py_ssize_t first_item, Py_ssize_t last_item
    ):
        """The ``scope_spans`` field of ``shard``'s items of one scope, or None."""
        cdef Py_ssize_t i, size = len(scope_head), found = 0
        cdef bytes made
        cdef char* at
        for i in range(first_item, last_item):
            if self.items[i].shard == shard:
                size += self.items[i].after - self.items[i].first
                found += 1
        if not found:
            return None
        made = _new_field(0x12, size)
        at = _value_at(made, size)
        memcpy(at, <char*>scope_head, len(scope_head))
        at += len(scope_head)
        for i in range(first_item, last_item):
            if self.items[i].shard == shard:
                memcpy(at, self.buf + self.items[i].first, self.items[i].after - self.items[i].first)
                at += self.items[i].after - self.items[i].first
        return made


def split_walk(bytes data, Py_ssize_t count, int trace_field):
    """``wire_split._walk``'s (payloads, counts), or ``Unusual`` (see the contract)."""
    cdef _Splitter splitter = _Splitter()
    cdef SplitField field
    cdef Py_ssize_t pos = 0, start, end = len(data)
    if count < 1:
        raise Unusual("count")
    splitter.data = data
    splitter.buf = <const unsigned char*>(<char*>data)
    splitter.size = end
    splitter.count = count
    splitter.trace_field = trace_field
    splitter.counts = [0] * count
    parts = [[] for _ in range(count)]
    while pos < end:
        start = pos
        splitter._field(pos, end, &field)
        pos = field.after
        if field.number != 1 or field.wire != LEN:
            continue  # unknown top-level field: dropped, as the decoder ignores it
        for shard, chunk in splitter._resource(field.value, field.after):
            parts[shard].append(chunk if chunk is not None else data[start:pos])
    if sum(1 for part in parts if part) == 1:  # one shard only: the payload as sent
        return [data if part else None for part in parts], splitter.counts
    return [b"".join(part) if part else None for part in parts], splitter.counts
