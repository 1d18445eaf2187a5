# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Native walk of a binary ``ExportTraceServiceRequest`` into ``Span`` records.

Why: reading a parsed upb message from Python costs ~0.1-0.5 µs per field access,
about 25 per span; this walk reads the same wire bytes directly and creates only
the Python objects the records hold (docs/adr/0011-compiled-hot-path.md).

Contract, relied on by ``collector.decode.protobuf``:

* it validates what upb would (``validate``, before anything is built): the wire
  structure of every message of the request's schema, known fields and unknown
  ones, and the UTF-8 of every ``string`` field, read or not; whatever upb might
  refuse, and more (groups, a wire type a known field does not have, nesting past
  ``MAX_DEPTH``, varints of ten bytes), raises ``Unusual``, and the caller lets upb
  parse and judge the payload (every read is bounds-checked as well: a bug raises
  ``Unusual``, it never reads outside the buffer). Payloads are parsed once, not
  by upb and again here (docs/adr/0021-replay-throughput.md);
* it returns exactly what the upb-object walk returns for the same bytes and
  selector (``tests/test_decode_native.py`` checks this on every golden trace,
  synthetic traces and fuzzed payloads);
* shapes it does not reproduce raise ``Unusual`` and the caller uses the upb walk:
  a singular message field given twice (protobuf merges the two), a known field
  with an unexpected wire type (upb keeps it as an unknown field), and groups.
"""

from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.object cimport PyObject
from cpython.ref cimport Py_INCREF, Py_XDECREF
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libc.string cimport memcmp, memcpy

cdef extern from "Python.h":
    bint PyUnicode_IS_COMPACT_ASCII(object)
    void* PyUnicode_DATA(object)

from google.protobuf.descriptor import FieldDescriptor
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from collector.core.records import Resource, Span, SpanEvent

cdef enum:
    VARINT = 0
    FIXED64 = 1
    LEN = 2
    FIXED32 = 5

# Records are built by position (``tuple.__new__``: no keyword parsing per span), in
# exactly these field orders; importing this module checks them against the record
# types, so a reordered or added field fails loudly instead of misassigning values.
SPAN_FIELDS = (
    "trace_id", "span_id", "parent_span_id", "name", "kind", "start_unix_nano",
    "end_unix_nano", "status_code", "status_message", "attributes", "events", "resource",
    "scope_name",
)
EVENT_FIELDS = ("name", "time_unix_nano", "attributes")
RESOURCE_FIELDS = ("service_name", "attributes")
for _record, _fields in ((Span, SPAN_FIELDS), (SpanEvent, EVENT_FIELDS), (Resource, RESOURCE_FIELDS)):
    if _record._fields != _fields:
        raise RuntimeError(
            f"collector.decode._wire builds {_record.__name__} as {_fields} but the record "
            f"is {_record._fields}: update _wire.pyx and rebuild (pip install -e .)"
        )

cdef object _tuple_new = tuple.__new__
cdef object _Span = Span
cdef object _SpanEvent = SpanEvent
cdef object _Resource = Resource
cdef bytes _ZERO_TRACE_ID = bytes(16)
cdef bytes _ZERO_SPAN_ID = bytes(8)


class Unusual(Exception):
    """The payload has a shape this walk leaves to upb (which may refuse it); nothing
    was returned."""


# --- validation schema -----------------------------------------------------
# What each field of each message of an ExportTraceServiceRequest holds, built from
# the protobuf descriptors at import: ``validate`` checks a payload against it.

cdef enum:
    MAX_MESSAGES = 32
    MAX_FIELD = 31  # OTLP trace messages number their fields 1..16
    MAX_DEPTH = 90  # upb refuses past 100 nested messages; deeper is left to it
    K_UNKNOWN = 0
    K_VARINT = 1
    K_FIXED64 = 2
    K_FIXED32 = 3
    K_BYTES = 4
    K_STRING = 5
    K_MESSAGE = 6

cdef unsigned char _kinds[MAX_MESSAGES][MAX_FIELD + 1]
cdef unsigned char _subs[MAX_MESSAGES][MAX_FIELD + 1]

_SCALAR_KINDS = {
    FieldDescriptor.TYPE_STRING: K_STRING,
    FieldDescriptor.TYPE_BYTES: K_BYTES,
    FieldDescriptor.TYPE_DOUBLE: K_FIXED64,
    FieldDescriptor.TYPE_FIXED64: K_FIXED64,
    FieldDescriptor.TYPE_SFIXED64: K_FIXED64,
    FieldDescriptor.TYPE_FLOAT: K_FIXED32,
    FieldDescriptor.TYPE_FIXED32: K_FIXED32,
    FieldDescriptor.TYPE_SFIXED32: K_FIXED32,
}


def _build_schema():
    """Fill ``_kinds`` / ``_subs`` for every message reachable from the request
    (index 0); any field the tables cannot describe fails the import."""
    index = {}
    order = [ExportTraceServiceRequest.DESCRIPTOR]
    index[order[0].full_name] = 0
    i = 0
    while i < len(order):
        descriptor = order[i]
        for field in descriptor.fields:
            if field.number > MAX_FIELD:
                raise RuntimeError(f"_wire: {descriptor.full_name}.{field.name} is numbered past {MAX_FIELD}")
            if field.type == FieldDescriptor.TYPE_MESSAGE:
                sub = field.message_type
                if sub.full_name not in index:
                    if len(order) == MAX_MESSAGES:
                        raise RuntimeError("_wire: more OTLP messages than MAX_MESSAGES")
                    index[sub.full_name] = len(order)
                    order.append(sub)
                _kinds[i][field.number] = K_MESSAGE
                _subs[i][field.number] = index[sub.full_name]
            elif field.type == FieldDescriptor.TYPE_GROUP:
                raise RuntimeError(f"_wire: {descriptor.full_name}.{field.name} is a group")
            else:
                # Repeated scalars could be packed (a LEN field): none in OTLP traces.
                if field.is_repeated and field.type not in (FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_BYTES):
                    raise RuntimeError(f"_wire: {descriptor.full_name}.{field.name} is a repeated scalar")
                _kinds[i][field.number] = _SCALAR_KINDS.get(field.type, K_VARINT)
        i += 1


_build_schema()


cdef bint _valid_utf8(const unsigned char* s, Py_ssize_t n):
    """Whether ``s[:n]`` is UTF-8 as upb and Python's strict codec define it (no
    overlong forms, no surrogates, nothing past U+10FFFF)."""
    cdef Py_ssize_t i = 0
    cdef uint64_t word, w1, w2, w3
    cdef unsigned char c, c1
    while i < n:
        if i + 32 <= n:
            memcpy(&word, s + i, 8)
            memcpy(&w1, s + i + 8, 8)
            memcpy(&w2, s + i + 16, 8)
            memcpy(&w3, s + i + 24, 8)
            if ((word | w1 | w2 | w3) & 0x8080808080808080ULL) == 0:
                i += 32
                continue
        if i + 8 <= n:
            memcpy(&word, s + i, 8)
            if (word & 0x8080808080808080ULL) == 0:
                i += 8
                continue
        c = s[i]
        if c < 0x80:
            i += 1
        elif 0xC2 <= c <= 0xDF:
            if i + 1 >= n or (s[i + 1] & 0xC0) != 0x80:
                return False
            i += 2
        elif 0xE0 <= c <= 0xEF:
            if i + 2 >= n:
                return False
            c1 = s[i + 1]
            if (c1 & 0xC0) != 0x80 or (s[i + 2] & 0xC0) != 0x80:
                return False
            if (c == 0xE0 and c1 < 0xA0) or (c == 0xED and c1 > 0x9F):
                return False  # overlong, or a surrogate
            i += 3
        elif 0xF0 <= c <= 0xF4:
            if i + 3 >= n:
                return False
            c1 = s[i + 1]
            if ((c1 & 0xC0) != 0x80 or (s[i + 2] & 0xC0) != 0x80
                    or (s[i + 3] & 0xC0) != 0x80):
                return False
            if (c == 0xF0 and c1 < 0x90) or (c == 0xF4 and c1 > 0x8F):
                return False  # overlong, or past U+10FFFF
            i += 4
        else:
            return False
    return True


# --- attribute keys ------------------------------------------------------
# The same few hundred attribute keys arrive over and over. A direct-mapped table
# keeps one ``str`` per slot, found by a hash of the key's bytes (eight at a time:
# a byte-at-a-time FNV-1a loop was 12 % of decoding) and a memcmp of the wire
# bytes: no decoding, no allocation, and a ``str`` whose hash is already cached
# for the frozenset test and the dict insert. Each slot also remembers whether
# the selector (its ``keys``, ``prefixes`` and ``suffixes`` objects, held so their addresses
# cannot be reused) wants the key. Only short ASCII keys are kept, whose UTF-8
# bytes are the ``str``'s own data. The GIL guards the table: nothing here
# releases it or runs Python code between a lookup and its use.

cdef enum:
    KEY_SLOTS = 4096  # a power of two
    KEY_MAX_BYTES = 80

cdef struct KeySlot:
    PyObject* key  # owned; NULL: empty
    PyObject* keys  # owned; the selector the ``wanted`` flag is for (NULL: none yet)
    PyObject* prefixes  # owned
    PyObject* suffixes  # owned
    uint64_t hash
    Py_ssize_t length
    bint wanted

cdef KeySlot _key_slots[KEY_SLOTS]


cdef KeySlot* _key_slot(const unsigned char* data, Py_ssize_t n):
    """The slot holding the key spelt by ``data[:n]`` (filled now if need be), or
    NULL when the key is not cached (long, or not ASCII)."""
    cdef uint64_t h = 14695981039346656037ULL ^ <uint64_t>n
    cdef uint64_t word
    cdef Py_ssize_t i = 0
    cdef KeySlot* slot
    if n > KEY_MAX_BYTES:
        return NULL
    while i + 8 <= n:
        memcpy(&word, data + i, 8)
        h = (h ^ word) * 0x9E3779B97F4A7C15ULL
        h ^= h >> 29
        i += 8
    if i < n:
        word = 0
        memcpy(&word, data + i, n - i)
        h = (h ^ word) * 0x9E3779B97F4A7C15ULL
        h ^= h >> 29
    h ^= h >> 32
    slot = &_key_slots[h & (KEY_SLOTS - 1)]
    if (slot.key != NULL and slot.hash == h and slot.length == n
            and memcmp(PyUnicode_DATA(<object>slot.key), data, n) == 0):
        return slot
    key = PyUnicode_DecodeUTF8(<const char*>data, n, NULL)
    if not PyUnicode_IS_COMPACT_ASCII(key):
        return NULL
    Py_INCREF(key)
    Py_XDECREF(slot.key)
    Py_XDECREF(slot.keys)
    Py_XDECREF(slot.prefixes)
    Py_XDECREF(slot.suffixes)
    slot.key, slot.keys, slot.prefixes, slot.suffixes = <PyObject*>key, NULL, NULL, NULL
    slot.hash, slot.length, slot.wanted = h, n, False
    return slot


def _key_slots_in_use():
    """How many slots hold a key (tests)."""
    return sum(1 for i in range(KEY_SLOTS) if _key_slots[i].key != NULL)


# --- short texts --------------------------------------------------------------
# Spans held in assembly repeat the same short texts over and over: operation names
# (``chat``, ``execute_tool``), model, tool and agent names, span names. A second
# direct-mapped table, like the keys' one, hands out one ``str`` per distinct short
# ASCII text, so held spans share them instead of each holding a copy (about 60
# bytes each; issue 16's memory per span). A miss costs what decoding costs anyway;
# unique texts (call ids) just take a slot over. The GIL guards the table.

cdef enum:
    TEXT_SLOTS = 8192  # a power of two
    TEXT_MAX_BYTES = 48

cdef struct TextSlot:
    PyObject* text  # owned; NULL: empty
    uint64_t hash
    Py_ssize_t length

cdef TextSlot _text_slots[TEXT_SLOTS]


cdef str _shared_text(const unsigned char* data, Py_ssize_t n):
    """The ``str`` of the UTF-8 ``data[:n]``: the table's when short ASCII."""
    cdef uint64_t h = 14695981039346656037ULL ^ <uint64_t>n
    cdef uint64_t chunk = 0
    cdef Py_ssize_t i = 0
    cdef TextSlot* slot
    if n > TEXT_MAX_BYTES:
        return PyUnicode_DecodeUTF8(<const char*>data, n, NULL)
    while i + 8 <= n:  # eight bytes a time (a byte loop costs more than the lookup)
        memcpy(&chunk, data + i, 8)
        h = (h ^ chunk) * 1099511628211ULL
        i += 8
    if i < n:
        chunk = 0
        memcpy(&chunk, data + i, n - i)
        h = (h ^ chunk) * 1099511628211ULL
    h ^= h >> 29
    slot = &_text_slots[h & (TEXT_SLOTS - 1)]
    if (slot.text != NULL and slot.hash == h and slot.length == n
            and memcmp(PyUnicode_DATA(<object>slot.text), data, n) == 0):
        return <str><object>slot.text
    text = PyUnicode_DecodeUTF8(<const char*>data, n, NULL)
    if not PyUnicode_IS_COMPACT_ASCII(text):
        return text
    Py_INCREF(text)
    Py_XDECREF(slot.text)
    slot.text, slot.hash, slot.length = <PyObject*>text, h, n
    return text


def _text_slots_in_use():
    """How many slots hold a text (tests)."""
    return sum(1 for i in range(TEXT_SLOTS) if _text_slots[i].text != NULL)


cdef object _wanted_key(const unsigned char* data, Py_ssize_t n, bint keep_all, object keys,
                        tuple prefixes, tuple suffixes):
    """The key spelt by the UTF-8 ``data[:n]`` if ``keep_all`` or the selector (``keys``,
    ``prefixes``, ``suffixes``) wants it, else None; the verdict is kept in the key's slot,
    per selector."""
    cdef KeySlot* slot = _key_slot(data, n)
    cdef bint wanted
    if slot == NULL:
        key = _shared_text(data, n)
        wanted = (keep_all or key in keys or key.startswith(prefixes)
                  or key.endswith(suffixes))
        return key if wanted else None
    key = <object>slot.key
    if keep_all:
        return key
    if (slot.keys != <PyObject*>keys or slot.prefixes != <PyObject*>prefixes
            or slot.suffixes != <PyObject*>suffixes):
        wanted = key in keys or key.startswith(prefixes) or key.endswith(suffixes)
        Py_INCREF(keys)
        Py_INCREF(prefixes)
        Py_INCREF(suffixes)
        Py_XDECREF(slot.keys)
        Py_XDECREF(slot.prefixes)
        Py_XDECREF(slot.suffixes)
        slot.keys, slot.prefixes = <PyObject*>keys, <PyObject*>prefixes
        slot.suffixes = <PyObject*>suffixes
        slot.wanted = wanted
    return key if slot.wanted else None


cdef class _Wire:
    """A payload's buffer and the wire primitives every walk of it reads with (the
    record walk here, the split of ``_wire_split.pxi``); each read is bounds-checked
    and raises ``Unusual`` rather than read past ``end``."""

    cdef const unsigned char* buf
    cdef Py_ssize_t size

    # --- wire primitives -------------------------------------------------

    cdef inline Py_ssize_t varint(self, Py_ssize_t pos, Py_ssize_t end, uint64_t* out) except -1:
        cdef uint64_t result = 0
        cdef int shift = 0
        cdef unsigned char byte
        while True:
            if pos >= end or shift > 63:
                raise Unusual("bad varint")
            byte = self.buf[pos]
            pos += 1
            result |= (<uint64_t>(byte & 0x7F)) << shift
            if byte < 0x80:
                out[0] = result
                return pos
            shift += 7

    cdef Py_ssize_t strict_varint(self, Py_ssize_t pos, Py_ssize_t end, uint64_t* out) except -1:
        """``varint``, refusing a tenth byte above 1 (bits past 64), as upb may."""
        cdef Py_ssize_t start = pos
        pos = self.varint(pos, end, out)
        if pos - start == 10 and self.buf[pos - 1] > 1:
            raise Unusual("varint past 64 bits")
        return pos

    cdef inline Py_ssize_t tag(self, Py_ssize_t pos, Py_ssize_t end, int* field, int* wire) except -1:
        """Reads the tag at ``pos``: its field number and wire type; returns what follows.
        (upb refused field numbers beyond 2**29, so they fit an int.)"""
        cdef uint64_t key
        pos = self.varint(pos, end, &key)
        field[0] = <int>(key >> 3)
        wire[0] = <int>(key & 7)
        return pos

    cdef inline Py_ssize_t length(self, Py_ssize_t pos, Py_ssize_t end, Py_ssize_t* sub_end) except -1:
        """Reads a length prefix at ``pos``; returns the payload start, sets its end."""
        cdef uint64_t n
        pos = self.varint(pos, end, &n)
        if n > <uint64_t>(end - pos):
            raise Unusual("length past the end")
        sub_end[0] = pos + <Py_ssize_t>n
        return pos

    cdef inline Py_ssize_t skip(self, Py_ssize_t pos, Py_ssize_t end, int wire) except -1:
        cdef uint64_t ignored
        cdef Py_ssize_t sub_end
        if wire == VARINT:
            return self.varint(pos, end, &ignored)
        if wire == LEN:
            self.length(pos, end, &sub_end)
            return sub_end
        if wire == FIXED64:
            pos += 8
        elif wire == FIXED32:
            pos += 4
        else:
            raise Unusual("group or invalid wire type")
        if pos > end:
            raise Unusual("fixed field past the end")
        return pos


cdef class _Walk(_Wire):
    """One payload's walk: the buffer, the selector, and what was counted."""

    cdef bint keep_all
    cdef object keys  # frozenset[str]
    cdef tuple prefixes
    cdef tuple suffixes
    cdef Py_ssize_t limit
    cdef object keep  # Callable[[bytes], bool] | None
    cdef public list spans
    cdef public Py_ssize_t rejected
    cdef public str message
    cdef public Py_ssize_t truncated
    cdef bytes last_trace_id  # the previous span's: spans of a trace share one object

    # --- wire primitives -------------------------------------------------

    cdef inline uint64_t fixed64(self, Py_ssize_t pos, Py_ssize_t end) except? 0:
        cdef uint64_t value
        if end - pos < 8:
            raise Unusual("fixed64 past the end")
        memcpy(&value, self.buf + pos, 8)  # little-endian, as x86-64 and aarch64 are
        return value

    cdef inline str text(self, Py_ssize_t start, Py_ssize_t end):
        return _shared_text(self.buf + start, end - start)

    cdef inline bytes raw(self, Py_ssize_t start, Py_ssize_t end):
        return PyBytes_FromStringAndSize(<const char*>(self.buf + start), end - start)

    cdef inline bytes trace_id(self, Py_ssize_t start, Py_ssize_t end):
        """The trace id at ``start``: the previous span's object when equal (a request
        carries a trace's spans together), so held spans do not each keep a copy."""
        cdef bytes last = self.last_trace_id
        if (last is not None and len(last) == end - start
                and memcmp(<const char*>last, self.buf + start, end - start) == 0):
            return last
        self.last_trace_id = self.raw(start, end)
        return self.last_trace_id

    cdef inline str cut(self, str value):
        if len(value) <= self.limit:
            return value
        self.truncated += 1
        return value[: self.limit]

    # --- validation ------------------------------------------------------

    cdef int validate(self, Py_ssize_t pos, Py_ssize_t end, int message, int depth) except -1:
        """Check the message of schema index ``message`` at [pos, end) and everything
        in it; ``Unusual`` for anything upb might refuse (see the module docstring)."""
        cdef uint64_t key, ignored, length
        cdef Py_ssize_t sub_end
        cdef int field, wire, kind
        if depth > MAX_DEPTH:
            raise Unusual("nested too deeply")
        while pos < end:
            if self.buf[pos] < 0x80:  # the usual one-byte tag, without a call
                key = self.buf[pos]
                pos += 1
            else:
                pos = self.strict_varint(pos, end, &key)
                if (key >> 32) != 0:
                    raise Unusual("tag past 32 bits")
            field = <int>(key >> 3)
            wire = <int>(key & 7)
            if field == 0:
                raise Unusual("field number 0")
            kind = _kinds[message][field] if field <= MAX_FIELD else K_UNKNOWN
            if kind == K_UNKNOWN and wire != VARINT:
                pos = self.skip(pos, end, wire)  # groups and wire types 6, 7: Unusual
            elif kind == K_VARINT or kind == K_UNKNOWN:
                if wire != VARINT:
                    raise Unusual("a known field with another wire type")
                pos = self.strict_varint(pos, end, &ignored)
            elif kind == K_FIXED64 or kind == K_FIXED32:
                if wire != (FIXED64 if kind == K_FIXED64 else FIXED32):
                    raise Unusual("a known field with another wire type")
                pos = self.skip(pos, end, wire)
            else:
                if wire != LEN:
                    raise Unusual("a known field with another wire type")
                if pos < end and self.buf[pos] < 0x80:  # a length below 128, without a call
                    sub_end = pos + 1 + self.buf[pos]
                    pos += 1
                    if sub_end > end:
                        raise Unusual("length past the end")
                else:
                    pos = self.strict_varint(pos, end, &length)
                    if length > <uint64_t>(end - pos):
                        raise Unusual("length past the end")
                    sub_end = pos + <Py_ssize_t>length
                if kind == K_STRING:
                    if not _valid_utf8(self.buf + pos, sub_end - pos):
                        raise Unusual("a string that is not UTF-8")
                elif kind == K_MESSAGE:
                    self.validate(pos, sub_end, _subs[message][field], depth + 1)
                pos = sub_end
        return 0

    # --- OTLP messages ---------------------------------------------------

    cdef object any_value(self, Py_ssize_t pos, Py_ssize_t end):
        """An ``AnyValue`` as the upb walk's ``_value`` returns it."""
        cdef uint64_t number = 0
        cdef int field, wire, which = 0
        cdef Py_ssize_t start = 0, stop = 0
        cdef double real
        while pos < end:
            pos = self.tag(pos, end, &field, &wire)
            if (field == 1 or field == 7) and wire == LEN:
                start = self.length(pos, end, &stop)
                pos, which = stop, field
            elif (field == 2 or field == 3 or field == 8) and wire == VARINT:
                pos = self.varint(pos, end, &number)
                which = field
            elif field == 4 and wire == FIXED64:
                number = self.fixed64(pos, end)
                which, pos = 4, pos + 8
            elif (field == 5 or field == 6) and wire == LEN:
                if which == field:
                    raise Unusual("array_value/kvlist_value given twice (merged)")
                start = self.length(pos, end, &stop)
                which, pos = field, stop
            elif 1 <= field <= 8:
                raise Unusual("AnyValue field with an unexpected wire type")
            else:
                pos = self.skip(pos, end, wire)
        if which == 1:
            return self.cut(self.text(start, stop))
        if which == 2:
            return number != 0
        if which == 3:
            return <int64_t>number
        if which == 4:
            memcpy(&real, &number, 8)
            return real
        if which == 5:
            return self.array(start, stop)
        if which == 6:
            return self.kvlist(start, stop)
        if which == 7:
            return self.raw(start, stop)
        return None

    cdef tuple array(self, Py_ssize_t pos, Py_ssize_t end):
        cdef int field, wire
        cdef Py_ssize_t start, stop
        items = []
        while pos < end:
            pos = self.tag(pos, end, &field, &wire)
            if field == 1 and wire == LEN:
                start = self.length(pos, end, &stop)
                items.append(self.any_value(start, stop))
                pos = stop
            elif field == 1:
                raise Unusual("ArrayValue.values with an unexpected wire type")
            else:
                pos = self.skip(pos, end, wire)
        return tuple(items)

    cdef dict kvlist(self, Py_ssize_t pos, Py_ssize_t end):
        cdef int field, wire
        cdef Py_ssize_t start, stop
        out = {}
        while pos < end:
            pos = self.tag(pos, end, &field, &wire)
            if field == 1 and wire == LEN:
                start = self.length(pos, end, &stop)
                self.key_value(start, stop, out, True)
                pos = stop
            elif field == 1:
                raise Unusual("KeyValueList.values with an unexpected wire type")
            else:
                pos = self.skip(pos, end, wire)
        return out

    cdef int key_value(self, Py_ssize_t pos, Py_ssize_t end, dict out, bint keep_all) except -1:
        """Adds one ``KeyValue`` to ``out`` if the selector (or ``keep_all``) wants its key."""
        cdef int field, wire
        cdef Py_ssize_t start, stop, key_start = 0, key_end = 0, value_start = -1, value_end = 0
        while pos < end:
            pos = self.tag(pos, end, &field, &wire)
            if field == 1 and wire == LEN:
                key_start = self.length(pos, end, &key_end)
                pos = key_end
            elif field == 2 and wire == LEN:
                if value_start >= 0:
                    raise Unusual("KeyValue.value given twice (merged)")
                value_start = self.length(pos, end, &value_end)
                pos = value_end
            elif field == 1 or field == 2 or (field == 3 and wire != VARINT):
                raise Unusual("KeyValue field with an unexpected wire type")
            else:
                pos = self.skip(pos, end, wire)
        key = self.wanted_key(key_start, key_end, keep_all)
        if key is not None:
            out[key] = None if value_start < 0 else self.any_value(value_start, value_end)
        return 0

    cdef inline object wanted_key(self, Py_ssize_t start, Py_ssize_t end, bint keep_all):
        """The key at [start, end) if the selector (or ``keep_all``) wants it, else None."""
        return _wanted_key(self.buf + start, end - start, keep_all or self.keep_all,
                           self.keys, self.prefixes, self.suffixes)

    cdef dict attributes(self, Py_ssize_t pos, Py_ssize_t end, int number, bint keep_all):
        """The ``KeyValue``s of field ``number`` of the message at [pos, end)."""
        cdef int field, wire
        cdef Py_ssize_t start, stop
        out = {}
        while pos < end:
            pos = self.tag(pos, end, &field, &wire)
            if field == number and wire == LEN:
                start = self.length(pos, end, &stop)
                self.key_value(start, stop, out, keep_all)
                pos = stop
            else:
                pos = self.skip(pos, end, wire)
        return out

    cdef object event(self, Py_ssize_t pos, Py_ssize_t end):
        cdef uint64_t time = 0
        cdef int field, wire
        cdef Py_ssize_t start, stop, first = pos
        name = ""
        while pos < end:
            pos = self.tag(pos, end, &field, &wire)
            if field == 1 and wire == FIXED64:
                time = self.fixed64(pos, end)
                pos += 8
            elif field == 2 and wire == LEN:
                start = self.length(pos, end, &stop)
                name, pos = self.text(start, stop), stop
            elif field == 3 and wire == LEN:
                start = self.length(pos, end, &stop)
                pos = stop
            elif field == 4 and wire == VARINT:
                pos = self.skip(pos, end, wire)
            elif 1 <= field <= 4:
                raise Unusual("Event field with an unexpected wire type")
            else:
                pos = self.skip(pos, end, wire)
        # Event attributes are always kept whole (their keys are not namespaced).
        return _tuple_new(_SpanEvent, (name, time, self.attributes(first, end, 3, True)))

    cdef str scope_name(self, Py_ssize_t pos, Py_ssize_t end):
        cdef int field, wire
        cdef Py_ssize_t start, stop
        name = ""
        while pos < end:
            pos = self.tag(pos, end, &field, &wire)
            if field == 1 and wire == LEN:
                start = self.length(pos, end, &stop)
                name, pos = self.text(start, stop), stop
            elif (field == 2 or field == 3) and wire != LEN or field == 4 and wire != VARINT:
                raise Unusual("InstrumentationScope field with an unexpected wire type")
            else:
                pos = self.skip(pos, end, wire)
        return name

    cdef object resource(self, Py_ssize_t pos, Py_ssize_t end):
        cdef int field, wire
        cdef Py_ssize_t first = pos
        while pos < end:  # check the wire types; attributes are read below
            pos = self.tag(pos, end, &field, &wire)
            if (field == 1 or field == 3) and wire != LEN or field == 2 and wire != VARINT:
                raise Unusual("Resource field with an unexpected wire type")
            pos = self.skip(pos, end, wire)
        attributes = self.attributes(first, end, 1, True)
        service = attributes.get("service.name")
        return _tuple_new(
            _Resource, (service if isinstance(service, str) else "unknown_service", attributes)
        )

    cdef int span(self, Py_ssize_t pos, Py_ssize_t end, object resource, str scope) except -1:
        cdef uint64_t number, start_time = 0, end_time = 0
        cdef int field, wire, kind = 0, status_code = 0
        cdef Py_ssize_t start, stop, first = pos, status_start = -1, status_end = 0
        cdef bint has_events = False
        trace_id = span_id = parent_id = b""
        name = status_message = ""
        while pos < end:  # pass 1: everything but attributes and events
            pos = self.tag(pos, end, &field, &wire)
            if wire == LEN and (field <= 5 or 9 <= field <= 15 and field != 10 and field != 12 and field != 14):
                start = self.length(pos, end, &stop)
                if field == 1:
                    trace_id = self.trace_id(start, stop)
                elif field == 2:
                    span_id = self.raw(start, stop)
                elif field == 4:
                    parent_id = self.raw(start, stop)
                elif field == 5:
                    name = self.text(start, stop)
                elif field == 11:
                    has_events = True
                elif field == 15:
                    if status_start >= 0:
                        raise Unusual("Span.status given twice (merged)")
                    status_start, status_end = start, stop
                pos = stop  # 3 trace_state, 9 attributes, 13 links: skipped here
            elif wire == VARINT and (field == 6 or field == 10 or field == 12 or field == 14):
                pos = self.varint(pos, end, &number)
                if field == 6:
                    kind = <int32_t>(<uint32_t>number)
            elif wire == FIXED64 and (field == 7 or field == 8):
                number = self.fixed64(pos, end)
                pos += 8
                if field == 7:
                    start_time = number
                else:
                    end_time = number
            elif wire == FIXED32 and field == 16:
                pos = self.skip(pos, end, wire)
            elif 1 <= field <= 16:
                raise Unusual("Span field with an unexpected wire type")
            else:
                pos = self.skip(pos, end, wire)
        problem = _invalid_ids(trace_id, span_id, parent_id)
        if problem is not None:
            self.rejected += 1
            if not self.message:
                self.message = problem
            return 0
        if self.keep is not None and not self.keep(trace_id):
            return 0
        if status_start >= 0:
            status_code, status_message = self.status(status_start, status_end)
        events = self.events(first, end) if has_events else ()
        # Roots keep every attribute: spec matching reads them.
        attributes = self.attributes(first, end, 9, not parent_id)
        self.spans.append(_tuple_new(_Span, (
            trace_id, span_id, parent_id, name, kind, start_time, end_time,
            status_code, status_message, attributes, events, resource, scope,
        )))
        return 0

    cdef tuple events(self, Py_ssize_t pos, Py_ssize_t end):
        cdef int field, wire
        cdef Py_ssize_t start, stop
        out = []
        while pos < end:
            pos = self.tag(pos, end, &field, &wire)
            if field == 11 and wire == LEN:
                start = self.length(pos, end, &stop)
                out.append(self.event(start, stop))
                pos = stop
            else:
                pos = self.skip(pos, end, wire)
        return tuple(out)

    cdef tuple status(self, Py_ssize_t pos, Py_ssize_t end):
        cdef uint64_t number
        cdef int field, wire, code = 0
        cdef Py_ssize_t start, stop
        message = ""
        while pos < end:
            pos = self.tag(pos, end, &field, &wire)
            if field == 2 and wire == LEN:
                start = self.length(pos, end, &stop)
                message, pos = self.text(start, stop), stop
            elif field == 3 and wire == VARINT:
                pos = self.varint(pos, end, &number)
                code = <int32_t>(<uint32_t>number)
            elif field == 2 or field == 3:
                raise Unusual("Status field with an unexpected wire type")
            else:
                pos = self.skip(pos, end, wire)
        return code, message

    cdef Py_ssize_t only_message(
        self, Py_ssize_t pos, Py_ssize_t end, str what, Py_ssize_t* sub_end
    ) except -2:
        """Where field 1 (``what``, a singular message) of a ResourceSpans / ScopeSpans
        at [pos, end) starts, -1 if absent; sets its end. In both, fields 1-3 are
        length-delimited; given twice, protobuf would merge the two: left to upb."""
        cdef int field, wire
        cdef Py_ssize_t start = -1
        while pos < end:
            pos = self.tag(pos, end, &field, &wire)
            if field == 1 and wire == LEN:
                if start >= 0:
                    raise Unusual(f"{what} given twice (merged)")
                start = self.length(pos, end, sub_end)
                pos = sub_end[0]
            elif 1 <= field <= 3 and wire != LEN:
                raise Unusual(f"beside {what}: a field with an unexpected wire type")
            else:
                pos = self.skip(pos, end, wire)
        return start

    cdef int scope_spans(self, Py_ssize_t pos, Py_ssize_t end, object resource) except -1:
        cdef int field, wire
        cdef Py_ssize_t start, stop, scope_end = 0
        # The scope may follow its spans on the wire: found first, then the spans.
        cdef Py_ssize_t scope_start = self.only_message(pos, end, "ScopeSpans.scope", &scope_end)
        scope = self.scope_name(scope_start, scope_end) if scope_start >= 0 else ""
        while pos < end:
            pos = self.tag(pos, end, &field, &wire)
            if field == 2 and wire == LEN:
                start = self.length(pos, end, &stop)
                self.span(start, stop, resource, scope)
                pos = stop
            else:
                pos = self.skip(pos, end, wire)
        return 0

    cdef int resource_spans(self, Py_ssize_t pos, Py_ssize_t end) except -1:
        cdef int field, wire
        cdef Py_ssize_t start, stop, resource_end = 0
        # The resource may follow its scopes on the wire: found first, then the scopes.
        cdef Py_ssize_t resource_start = self.only_message(
            pos, end, "ResourceSpans.resource", &resource_end
        )
        if resource_start >= 0:
            resource = self.resource(resource_start, resource_end)
        else:
            resource = _tuple_new(_Resource, ("unknown_service", {}))
        while pos < end:
            pos = self.tag(pos, end, &field, &wire)
            if field == 2 and wire == LEN:
                start = self.length(pos, end, &stop)
                self.scope_spans(start, stop, resource)
                pos = stop
            else:
                pos = self.skip(pos, end, wire)
        return 0

    cdef int request(self) except -1:
        cdef int field, wire
        cdef Py_ssize_t pos = 0, end = self.size, start, stop
        while pos < end:
            pos = self.tag(pos, end, &field, &wire)
            if field == 1 and wire == LEN:
                start = self.length(pos, end, &stop)
                self.resource_spans(start, stop)
                pos = stop
            elif field == 1:
                raise Unusual("resource_spans with an unexpected wire type")
            else:
                pos = self.skip(pos, end, wire)
        return 0


cdef object _invalid_ids(bytes trace_id, bytes span_id, bytes parent_id):
    # The same checks and messages as protobuf._invalid_ids.
    if len(trace_id) != 16 or trace_id == _ZERO_TRACE_ID:
        return "span with an empty or invalid trace_id"
    if len(span_id) != 8 or span_id == _ZERO_SPAN_ID:
        return "span with an empty or invalid span_id"
    if parent_id and len(parent_id) != 8:
        return "span with an invalid parent_span_id"
    return None


def walk(
    const unsigned char[::1] data,
    bint keep_all,
    keys,
    tuple prefixes,
    Py_ssize_t max_value_size,
    keep,
    tuple suffixes=(),
):
    """(spans, rejected, first rejection reason, truncated values) of a request.

    Raises ``Unusual`` for the shapes listed in the module docstring, invalid ones
    among them.
    """
    cdef _Walk walker = _Walk()
    walker.buf = &data[0] if data.shape[0] else NULL
    walker.size = data.shape[0]
    walker.keep_all = keep_all
    walker.keys = keys
    walker.prefixes = prefixes
    walker.suffixes = suffixes
    walker.limit = max_value_size
    walker.keep = keep
    walker.spans = []
    walker.rejected = 0
    walker.message = ""
    walker.truncated = 0
    if walker.size:
        walker.validate(0, walker.size, 0, 1)
        walker.request()
    return walker.spans, walker.rejected, walker.message, walker.truncated


include "_wire_json.pxi"
include "_wire_split.pxi"
