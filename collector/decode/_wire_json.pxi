# Included by _wire.pyx: the OTLP/JSON walk shares its tables, records and ``Unusual``.
#
# Native walk of an OTLP/JSON ``ExportTraceServiceRequest`` into ``Span`` records.
#
# Why: msgspec decoding the document into structs, then a Python walk over them,
# cost ~4x the binary decode per trace and kept OTLP/JSON replay at ~2x the binary
# time (issue 16: within 1.5x). This walk reads the JSON bytes once and creates only
# the Python objects the records hold (docs/adr/0024-json-walker-and-collector.md).
#
# Contract, relied on by ``collector.decode.otlp_json.decode_json_typed``:
#
# * it accepts a strict subset of what the typed walk (msgspec structs,
#   ``otlp_json_typed``) accepts, and returns exactly what that walk returns for the
#   same bytes, selector and ``keep``; ``tests/unit/decode/test_decode_json_native.py``
#   compares them on every golden capture, synthetic traces and fuzzed documents;
# * anything else raises ``Unusual`` (or ``UnicodeDecodeError`` for a string that is
#   not UTF-8) and the caller runs the typed walk, which accepts, or hands over to
#   the paths after it, which accept or refuse naming the field. Left to them: nulls,
#   keys not camelCase or unknown, a key given twice, escaped keys, ``bytesValue``,
#   string indexes, links with attributes or ids not of their size, numbers where
#   the typed walk would read a float or an
#   unusual integer spelling, ``resourceLogs``, a resource after its scopes, a scope
#   after its spans, nesting past the typed walk's limit, and malformed JSON.
#
# Every read is bounds-checked: a walk never reads outside the buffer.

from cpython.bytearray cimport PyByteArray_AS_STRING, PyByteArray_FromStringAndSize
from cpython.float cimport PyFloat_FromString

cdef enum:
    JSON_MAX_DEPTH = 64  # otlp_json_typed.FAST_MAX_DEPTH
    JSON_SKIP_DEPTH = 200  # any deeper value is left to the typed walk
    NUMBER_MAX_BYTES = 40

cdef int _HEX[256]
for _i in range(256):
    _HEX[_i] = -1
for _i, _c in enumerate("0123456789abcdef"):
    _HEX[ord(_c)] = _i
for _i, _c in enumerate("ABCDEF"):
    _HEX[ord(_c)] = 10 + _i

_JSON_KIND_NAMES = {
    "SPAN_KIND_UNSPECIFIED": 0, "SPAN_KIND_INTERNAL": 1, "SPAN_KIND_SERVER": 2,
    "SPAN_KIND_CLIENT": 3, "SPAN_KIND_PRODUCER": 4, "SPAN_KIND_CONSUMER": 5,
}
_JSON_STATUS_NAMES = {"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}


cdef class _JsonWalk:
    """One document's walk: the buffer, the position, the selector, what was counted."""

    cdef const unsigned char* buf
    cdef Py_ssize_t size
    cdef Py_ssize_t pos
    cdef bint keep_all
    cdef object keys
    cdef tuple prefixes
    cdef tuple suffixes
    cdef Py_ssize_t limit
    cdef object keep
    cdef public list spans
    cdef public Py_ssize_t rejected
    cdef public str message
    cdef public Py_ssize_t truncated
    cdef bytes last_trace_id

    # --- tokens --------------------------------------------------------------

    cdef inline unsigned char peek(self) except? 0:
        """The next byte after white space; ``Unusual`` at the end of the buffer."""
        cdef unsigned char c
        while self.pos < self.size:
            c = self.buf[self.pos]
            if c == 0x20 or c == 0x0A or c == 0x0D or c == 0x09:
                self.pos += 1
            else:
                return c
        raise Unusual("JSON ends early")

    cdef inline int expect(self, unsigned char c) except -1:
        if self.peek() != c:
            raise Unusual("unexpected JSON")
        self.pos += 1
        return 0

    cdef inline bint more(self, unsigned char close) except -1:
        """After an item of an object or array: True if another follows."""
        cdef unsigned char c = self.peek()
        self.pos += 1
        if c == 44:  # ,
            return True
        if c == close:
            return False
        raise Unusual("unexpected JSON")

    cdef inline bint opens(self, unsigned char open_, unsigned char close) except -1:
        """Past ``open_``; False if the object or array is empty (and past it)."""
        self.expect(open_)
        if self.peek() == close:
            self.pos += 1
            return False
        return True

    cdef int string_bounds(self, Py_ssize_t* start, Py_ssize_t* end) except -1:
        """Past a string; its content is [start, end). Returns 1 if it holds escapes."""
        cdef Py_ssize_t i
        cdef unsigned char c
        cdef int escaped = 0
        self.expect(34)  # "
        i = self.pos
        start[0] = i
        while i < self.size:
            c = self.buf[i]
            if c == 34:
                end[0] = i
                self.pos = i + 1
                return escaped
            if c == 92:  # backslash: the escape is checked when the string is read
                escaped = 1
                i += 2
            elif c < 0x20:
                raise Unusual("control character in a JSON string")
            else:
                i += 1
        raise Unusual("unterminated JSON string")

    cdef str unescaped(self, Py_ssize_t start, Py_ssize_t end):
        """The string with escapes at [start, end), decoded."""
        cdef bytearray out = PyByteArray_FromStringAndSize(NULL, end - start)
        cdef unsigned char* o = <unsigned char*>PyByteArray_AS_STRING(out)
        cdef Py_ssize_t n = 0, i = start
        cdef unsigned char c
        cdef uint32_t code, low
        while i < end:
            c = self.buf[i]
            if c != 92:
                o[n] = c
                n += 1
                i += 1
                continue
            if i + 1 >= end:
                raise Unusual("bad escape")
            c = self.buf[i + 1]
            i += 2
            if c == 34 or c == 92 or c == 47:
                o[n] = c
            elif c == 98:
                o[n] = 8
            elif c == 102:
                o[n] = 12
            elif c == 110:
                o[n] = 10
            elif c == 114:
                o[n] = 13
            elif c == 116:
                o[n] = 9
            elif c == 117:  # \uXXXX: at most 6 bytes in, at most 4 out
                code = self.hex4(i, end)
                i += 4
                if 0xDC00 <= code <= 0xDFFF:
                    raise Unusual("lone low surrogate")
                if 0xD800 <= code <= 0xDBFF:
                    if i + 6 > end or self.buf[i] != 92 or self.buf[i + 1] != 117:
                        raise Unusual("lone high surrogate")
                    low = self.hex4(i + 2, end)
                    if not 0xDC00 <= low <= 0xDFFF:
                        raise Unusual("lone high surrogate")
                    i += 6
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                n += _utf8(code, o + n)
                continue
            else:
                raise Unusual("bad escape")
            n += 1
        return PyUnicode_DecodeUTF8(<const char*>o, n, NULL)

    cdef uint32_t hex4(self, Py_ssize_t i, Py_ssize_t end) except? 0xFFFFFFFF:
        cdef uint32_t code = 0
        cdef int digit
        cdef Py_ssize_t k
        if i + 4 > end:
            raise Unusual("bad escape")
        for k in range(4):
            digit = _HEX[self.buf[i + k]]
            if digit < 0:
                raise Unusual("bad escape")
            code = (code << 4) | <uint32_t>digit
        return code

    cdef str string(self):
        cdef Py_ssize_t start, end
        if self.string_bounds(&start, &end):
            return self.unescaped(start, end)
        return _shared_text(self.buf + start, end - start)

    cdef inline int key(self, Py_ssize_t* start, Py_ssize_t* end) except -1:
        """Past an object key and its colon; escaped keys are left to the typed walk."""
        if self.string_bounds(start, end):
            raise Unusual("escaped key")
        self.expect(58)  # :
        return 0

    cdef inline bint named(self, Py_ssize_t start, Py_ssize_t end, const char* name, Py_ssize_t n):
        return end - start == n and memcmp(self.buf + start, name, n) == 0

    cdef int number_bounds(self, Py_ssize_t* start, Py_ssize_t* end) except -1:
        """Past a JSON number at [start, end). Returns 1 if it is an integer (no
        fraction, no exponent)."""
        cdef Py_ssize_t i
        cdef int integral = 1
        self.peek()
        i = self.pos
        start[0] = i
        if i < self.size and self.buf[i] == 45:  # -
            i += 1
        if i >= self.size or not 48 <= self.buf[i] <= 57:
            raise Unusual("not a JSON number")
        if self.buf[i] == 48:
            i += 1
        else:
            while i < self.size and 48 <= self.buf[i] <= 57:
                i += 1
        if i < self.size and self.buf[i] == 46:  # .
            integral = 0
            i += 1
            if i >= self.size or not 48 <= self.buf[i] <= 57:
                raise Unusual("not a JSON number")
            while i < self.size and 48 <= self.buf[i] <= 57:
                i += 1
        if i < self.size and (self.buf[i] == 101 or self.buf[i] == 69):  # e E
            integral = 0
            i += 1
            if i < self.size and (self.buf[i] == 43 or self.buf[i] == 45):
                i += 1
            if i >= self.size or not 48 <= self.buf[i] <= 57:
                raise Unusual("not a JSON number")
            while i < self.size and 48 <= self.buf[i] <= 57:
                i += 1
        if i - start[0] > NUMBER_MAX_BYTES:
            raise Unusual("long JSON number")
        end[0] = i
        self.pos = i
        return integral

    cdef object digits(self, Py_ssize_t start, Py_ssize_t end, bint negative_ok, uint64_t high, uint64_t low_magnitude):
        """The integer spelt by [start, end): decimal digits, a leading ``-`` if
        ``negative_ok``; ``Unusual`` outside [-low_magnitude, high]."""
        cdef bint negative = False
        cdef uint64_t value = 0, digit
        cdef Py_ssize_t i = start
        if i < end and self.buf[i] == 45:
            if not negative_ok:
                raise Unusual("negative")
            negative = True
            i += 1
        if i >= end or end - i > 20:
            raise Unusual("not an integer")
        while i < end:
            if not 48 <= self.buf[i] <= 57:
                raise Unusual("not an integer")
            digit = self.buf[i] - 48
            if value > (0xFFFFFFFFFFFFFFFFULL - digit) // 10:
                raise Unusual("integer out of range")
            value = value * 10 + digit
            i += 1
        if negative:
            if value > low_magnitude:
                raise Unusual("integer out of range")
            return -(<object>value)
        if value > high:
            raise Unusual("integer out of range")
        return value

    cdef object integer(self, bint negative_ok, uint64_t high, uint64_t low_magnitude):
        """``f._integer``: a JSON integer, or a string of decimal digits."""
        cdef Py_ssize_t start, end
        if self.peek() == 34:
            if self.string_bounds(&start, &end):
                raise Unusual("escaped integer")
            return self.digits(start, end, negative_ok, high, low_magnitude)
        if not self.number_bounds(&start, &end):
            raise Unusual("a float where an integer belongs")
        return self.digits(start, end, negative_ok, high, low_magnitude)

    cdef inline object uint32(self):
        return self.integer(False, 0xFFFFFFFFULL, 0)

    cdef inline object uint64(self):
        return self.integer(False, 0xFFFFFFFFFFFFFFFFULL, 0)

    cdef object enum(self, dict names):
        """``f.enum``: an int32, or one of ``names``."""
        cdef Py_ssize_t start, end
        if self.peek() == 34:
            name = self.string()
            value = names.get(name)
            if value is None:
                raise Unusual("unknown enum name")
            return value
        if not self.number_bounds(&start, &end):
            raise Unusual("a float where an enum belongs")
        return self.digits(start, end, True, 0x7FFFFFFFULL, 0x80000000ULL)

    cdef bytes hex_id(self, Py_ssize_t size):
        """``_hex_id``: "" or exactly ``2 * size`` hex digits."""
        cdef Py_ssize_t start, end, k
        cdef int high, low
        if self.string_bounds(&start, &end):
            raise Unusual("escaped id")
        if end == start:
            return b""
        if end - start != 2 * size:
            raise Unusual("id of the wrong size")
        cdef bytes out = PyBytes_FromStringAndSize(NULL, size)
        cdef unsigned char* o = <unsigned char*><char*>out
        for k in range(size):
            high = _HEX[self.buf[start + 2 * k]]
            low = _HEX[self.buf[start + 2 * k + 1]]
            if high < 0 or low < 0:
                raise Unusual("not hex")
            o[k] = <unsigned char>((high << 4) | low)
        return out

    cdef bint boolean(self) except -1:
        cdef Py_ssize_t i
        self.peek()
        i = self.pos
        if i + 4 <= self.size and memcmp(self.buf + i, b"true", 4) == 0:
            self.pos = i + 4
            return True
        if i + 5 <= self.size and memcmp(self.buf + i, b"false", 5) == 0:
            self.pos = i + 5
            return False
        raise Unusual("not a boolean")

    cdef int skip(self, int depth) except -1:
        """Past any JSON value, checked only for its structure (it is read later)."""
        cdef unsigned char c = self.peek()
        cdef Py_ssize_t start, end
        if depth > JSON_SKIP_DEPTH:
            raise Unusual("nested too deeply")
        if c == 34:
            self.string_bounds(&start, &end)
        elif c == 123:  # {
            if self.opens(123, 125):
                while True:
                    self.key(&start, &end)
                    self.skip(depth + 1)
                    if not self.more(125):
                        break
        elif c == 91:  # [
            if self.opens(91, 93):
                while True:
                    self.skip(depth + 1)
                    if not self.more(93):
                        break
        elif c == 116 or c == 102:
            self.boolean()
        else:
            self.number_bounds(&start, &end)
        return 0

    # --- values ----------------------------------------------------------------

    cdef inline str cut(self, str value):
        if len(value) <= self.limit:
            return value
        self.truncated += 1
        return value[: self.limit]

    cdef object any_value(self, int depth):
        """One ``AnyValue`` object: its one member, or None when it has none."""
        cdef Py_ssize_t start, end
        cdef int members = 0
        value = None
        if depth > JSON_MAX_DEPTH:
            raise Unusual("nested too deeply")
        if not self.opens(123, 125):
            return None
        while True:
            self.key(&start, &end)
            members += 1
            if members > 1:
                raise Unusual("two members")
            if self.named(start, end, b"stringValue", 11):
                value = self.cut(self.string())
            elif self.named(start, end, b"intValue", 8):
                value = self.integer(True, 0x7FFFFFFFFFFFFFFFULL, 0x8000000000000000ULL)
            elif self.named(start, end, b"boolValue", 9):
                value = self.boolean()
            elif self.named(start, end, b"doubleValue", 11):
                value = self.double()
            elif self.named(start, end, b"arrayValue", 10):
                value = self.array(depth)
            elif self.named(start, end, b"kvlistValue", 11):
                value = self.kvlist(depth)
            else:
                raise Unusual("AnyValue member left to the typed walk")
            if not self.more(125):
                return value

    cdef object double(self):
        """``f.double`` of what msgspec reads: a finite float; an integer is converted
        (so ``-0`` is ``0.0``); the special strings are left to the typed walk."""
        cdef Py_ssize_t start, end
        cdef double value
        if self.peek() == 34:
            raise Unusual("special double")
        integral = self.number_bounds(&start, &end)
        number = PyFloat_FromString(PyBytes_FromStringAndSize(<const char*>(self.buf + start), end - start))
        value = number
        if value - value != 0.0:  # inf or nan: msgspec refuses what overflows
            raise Unusual("double out of range")
        if integral and value == 0.0:
            return 0.0
        return number

    cdef list values_list(self, int depth, bint key_values):
        """``{"values": [...]}`` of an array or kvlist: AnyValues, or KeyValues into a
        dict (returned as the only item of the list)."""
        cdef Py_ssize_t start, end
        cdef bint seen = False
        items = []
        out = {}
        if self.opens(123, 125):
            while True:
                self.key(&start, &end)
                if seen or not self.named(start, end, b"values", 6):
                    raise Unusual("ArrayValue/KeyValueList field left to the typed walk")
                seen = True
                if key_values:
                    out = self.attributes(depth + 3, True, True)
                elif self.opens(91, 93):
                    while True:
                        items.append(self.any_value(depth + 2))
                        if not self.more(93):
                            break
                if not self.more(125):
                    break
        return [out] if key_values else items

    cdef tuple array(self, int depth):
        return tuple(self.values_list(depth, False))

    cdef dict kvlist(self, int depth):
        return self.values_list(depth, True)[0]

    cdef inline object wanted_key(self, Py_ssize_t start, Py_ssize_t end, bint keep_all):
        """The key at [start, end) if the selector (or ``keep_all``) wants it, else None
        (unescaped JSON keys are their UTF-8)."""
        return _wanted_key(self.buf + start, end - start, keep_all or self.keep_all,
                           self.keys, self.prefixes, self.suffixes)

    cdef dict attributes(self, int depth, bint keep_all, bint read):
        """A KeyValue list whose values sit at message ``depth``; values not wanted (or
        all, without ``read``) are only checked, their truncation uncounted."""
        cdef Py_ssize_t start, end, key_start = 0, key_end = 0, before
        cdef bint has_key, has_value
        out = {}
        if not self.opens(91, 93):
            return out
        while True:
            has_key = has_value = False
            value = None
            wanted = None
            if self.opens(123, 125):
                while True:
                    self.key(&start, &end)
                    if self.named(start, end, b"key", 3) and not has_key and not has_value:
                        has_key = True
                        if self.string_bounds(&key_start, &key_end):
                            raise Unusual("escaped attribute key")
                        if not _valid_utf8(self.buf + key_start, key_end - key_start):
                            raise Unusual("attribute key not UTF-8")
                    elif self.named(start, end, b"value", 5) and has_key and not has_value:
                        has_value = True
                        wanted = self.wanted_key(key_start, key_end, keep_all) if read else None
                        before = self.truncated
                        value = self.any_value(depth)
                        if wanted is None:
                            self.truncated = before
                    else:
                        raise Unusual("KeyValue field left to the typed walk")
                    if not self.more(125):
                        break
            if not has_key:
                raise Unusual("KeyValue without a key")
            if not has_value and depth > JSON_MAX_DEPTH:
                raise Unusual("nested too deeply")  # the typed walk checks absent values too
            if not has_value and read:  # a key without a value: None, if wanted
                wanted = self.wanted_key(key_start, key_end, keep_all)
            if wanted is not None:
                out[wanted] = value
            if not self.more(93):
                return out

    # --- messages ----------------------------------------------------------------

    cdef object event(self, bint read):
        cdef Py_ssize_t start, end
        cdef unsigned int seen = 0, bit
        name = ""
        time = 0
        attributes = {}
        if self.opens(123, 125):
            while True:
                self.key(&start, &end)
                if self.named(start, end, b"name", 4):
                    bit = 1
                    name = self.string()
                elif self.named(start, end, b"timeUnixNano", 12):
                    bit = 2
                    time = self.uint64()
                elif self.named(start, end, b"attributes", 10):
                    bit = 4
                    attributes = self.attributes(7, True, read)
                elif self.named(start, end, b"droppedAttributesCount", 22):
                    bit = 8
                    self.uint32()
                else:
                    raise Unusual("Event field left to the typed walk")
                if seen & bit:
                    raise Unusual("field given twice")
                seen |= bit
                if not self.more(125):
                    break
        return _tuple_new(_SpanEvent, (name, time, attributes))

    cdef int link(self) except -1:
        """A link, checked and never read: ids of their size, no attributes (a link
        with some is left to the typed walk)."""
        cdef Py_ssize_t start, end
        cdef unsigned int seen = 0, bit
        if self.opens(123, 125):
            while True:
                self.key(&start, &end)
                if self.named(start, end, b"traceId", 7):
                    bit = 1
                    self.hex_id(16)
                elif self.named(start, end, b"spanId", 6):
                    bit = 2
                    self.hex_id(8)
                elif self.named(start, end, b"traceState", 10):
                    bit = 4
                    self.string()
                elif self.named(start, end, b"attributes", 10):
                    bit = 8
                    self.expect(91)
                    self.expect(93)
                elif self.named(start, end, b"droppedAttributesCount", 22):
                    bit = 16
                    self.uint32()
                elif self.named(start, end, b"flags", 5):
                    bit = 32
                    self.uint32()
                else:
                    raise Unusual("Link field left to the typed walk")
                if seen & bit:
                    raise Unusual("field given twice")
                seen |= bit
                if not self.more(125):
                    break
        return 0

    cdef tuple events(self, bint read):
        out = []
        if self.opens(91, 93):
            while True:
                out.append(self.event(read))
                if not self.more(93):
                    break
        return tuple(out)

    cdef tuple status(self):
        cdef Py_ssize_t start, end
        cdef unsigned int seen = 0, bit
        code = 0
        message = ""
        if self.opens(123, 125):
            while True:
                self.key(&start, &end)
                if self.named(start, end, b"code", 4):
                    bit = 1
                    code = self.enum(_JSON_STATUS_NAMES)
                elif self.named(start, end, b"message", 7):
                    bit = 2
                    message = self.string()
                else:
                    raise Unusual("Status field left to the typed walk")
                if seen & bit:
                    raise Unusual("field given twice")
                seen |= bit
                if not self.more(125):
                    break
        return code, message

    cdef bytes trace_id(self):
        cdef bytes found = self.hex_id(16)
        cdef bytes last = self.last_trace_id
        if last is not None and found == last:
            return last
        self.last_trace_id = found
        return found

    cdef int span(self, object resource, str scope_name) except -1:
        cdef Py_ssize_t start, end, attributes_at = -1, events_at = -1, resume
        cdef unsigned int seen = 0, bit
        cdef bint read = False, decided = False
        trace_id = span_id = parent_id = b""
        name = ""
        kind = start_time = end_time = code = 0
        message = ""
        attributes = {}
        events = ()
        problem = None
        if self.opens(123, 125):
            while True:
                self.key(&start, &end)
                if self.named(start, end, b"traceId", 7):
                    bit = 1
                    trace_id = self.trace_id()
                elif self.named(start, end, b"spanId", 6):
                    bit = 2
                    span_id = self.hex_id(8)
                elif self.named(start, end, b"parentSpanId", 12):
                    bit = 4
                    parent_id = self.hex_id(8)
                elif self.named(start, end, b"name", 4):
                    bit = 8
                    name = self.string()
                elif self.named(start, end, b"kind", 4):
                    bit = 16
                    kind = self.enum(_JSON_KIND_NAMES)
                elif self.named(start, end, b"startTimeUnixNano", 17):
                    bit = 32
                    start_time = self.uint64()
                elif self.named(start, end, b"endTimeUnixNano", 15):
                    bit = 64
                    end_time = self.uint64()
                elif self.named(start, end, b"attributes", 10):
                    bit = 128
                    if seen & 7 == 7:  # the ids are known: read them now
                        problem, read = self.decide(trace_id, span_id, parent_id)
                        decided = True
                        attributes = self.attributes(6, not parent_id, read)
                    else:  # a root (no parentSpanId) or ids after the attributes
                        attributes_at = self.pos
                        self.skip(0)
                elif self.named(start, end, b"events", 6):
                    bit = 256
                    events_at = self.pos
                    self.skip(0)
                elif self.named(start, end, b"status", 6):
                    bit = 512
                    code, message = self.status()
                elif self.named(start, end, b"traceState", 10):
                    bit = 1024
                    self.string()
                elif self.named(start, end, b"flags", 5):
                    bit = 2048
                    self.uint32()
                elif self.named(start, end, b"droppedAttributesCount", 22):
                    bit = 4096
                    self.uint32()
                elif self.named(start, end, b"droppedEventsCount", 18):
                    bit = 8192
                    self.uint32()
                elif self.named(start, end, b"droppedLinksCount", 17):
                    bit = 16384
                    self.uint32()
                elif self.named(start, end, b"links", 5):
                    bit = 32768
                    if self.opens(91, 93):
                        while True:
                            self.link()
                            if not self.more(93):
                                break
                else:
                    raise Unusual("Span field left to the typed walk")
                if seen & bit:
                    raise Unusual("field given twice")
                seen |= bit
                if not self.more(125):
                    break
        if not decided:
            problem, read = self.decide(trace_id, span_id, parent_id)
        resume = self.pos
        if attributes_at >= 0:
            self.pos = attributes_at
            attributes = self.attributes(6, not parent_id, read)
        if events_at >= 0:
            self.pos = events_at
            events = self.events(read)
        self.pos = resume
        if problem is not None:
            self.rejected += 1
            if not self.message:
                self.message = problem
        if read:
            self.spans.append(_tuple_new(_Span, (
                trace_id, span_id, parent_id, name, kind, start_time, end_time, code,
                message, attributes, events, resource, scope_name,
            )))
        return 0

    cdef tuple decide(self, bytes trace_id, bytes span_id, bytes parent_id):
        """(the ids' problem or None, whether the span is read)."""
        problem = _invalid_ids(trace_id, span_id, parent_id)
        if problem is not None:
            return problem, False
        return None, self.keep is None or bool(self.keep(trace_id))

    cdef str scope(self):
        cdef Py_ssize_t start, end
        cdef unsigned int seen = 0, bit
        name = ""
        if self.opens(123, 125):
            while True:
                self.key(&start, &end)
                if self.named(start, end, b"name", 4):
                    bit = 1
                    name = self.string()
                elif self.named(start, end, b"version", 7):
                    bit = 2
                    self.string()
                elif self.named(start, end, b"attributes", 10):
                    bit = 4
                    self.attributes(6, True, False)
                elif self.named(start, end, b"droppedAttributesCount", 22):
                    bit = 8
                    self.uint32()
                else:
                    raise Unusual("InstrumentationScope field left to the typed walk")
                if seen & bit:
                    raise Unusual("field given twice")
                seen |= bit
                if not self.more(125):
                    break
        return name

    cdef int scope_spans(self, object resource) except -1:
        cdef Py_ssize_t start, end
        cdef unsigned int seen = 0, bit
        scope_name = ""
        if self.opens(123, 125):
            while True:
                self.key(&start, &end)
                if self.named(start, end, b"scope", 5):
                    bit = 1
                    if seen & 2:
                        raise Unusual("scope after its spans")
                    scope_name = self.scope()
                elif self.named(start, end, b"spans", 5):
                    bit = 2
                    if self.opens(91, 93):
                        while True:
                            self.span(resource, scope_name)
                            if not self.more(93):
                                break
                elif self.named(start, end, b"schemaUrl", 9):
                    bit = 4
                    self.string()
                else:
                    raise Unusual("ScopeSpans field left to the typed walk")
                if seen & bit:
                    raise Unusual("field given twice")
                seen |= bit
                if not self.more(125):
                    break
        return 0

    cdef object resource(self):
        cdef Py_ssize_t start, end
        cdef unsigned int seen = 0, bit
        attributes = {}
        if self.opens(123, 125):
            while True:
                self.key(&start, &end)
                if self.named(start, end, b"attributes", 10):
                    bit = 1
                    attributes = self.attributes(5, True, True)
                elif self.named(start, end, b"droppedAttributesCount", 22):
                    bit = 2
                    self.uint32()
                elif self.named(start, end, b"entityRefs", 10):
                    bit = 4
                    self.expect(91)
                    self.expect(93)
                else:
                    raise Unusual("Resource field left to the typed walk")
                if seen & bit:
                    raise Unusual("field given twice")
                seen |= bit
                if not self.more(125):
                    break
        service = attributes.get("service.name")
        return _tuple_new(_Resource, (service if isinstance(service, str) else "unknown_service", attributes))

    cdef int resource_spans(self) except -1:
        cdef Py_ssize_t start, end
        cdef unsigned int seen = 0, bit
        resource = _tuple_new(_Resource, ("unknown_service", {}))
        if self.opens(123, 125):
            while True:
                self.key(&start, &end)
                if self.named(start, end, b"resource", 8):
                    bit = 1
                    if seen & 2:
                        raise Unusual("resource after its scopes")
                    resource = self.resource()
                elif self.named(start, end, b"scopeSpans", 10):
                    bit = 2
                    if self.opens(91, 93):
                        while True:
                            self.scope_spans(resource)
                            if not self.more(93):
                                break
                elif self.named(start, end, b"schemaUrl", 9):
                    bit = 4
                    self.string()
                else:
                    raise Unusual("ResourceSpans field left to the typed walk")
                if seen & bit:
                    raise Unusual("field given twice")
                seen |= bit
                if not self.more(125):
                    break
        return 0

    cdef int request(self) except -1:
        cdef Py_ssize_t start, end
        cdef bint seen = False
        cdef unsigned char c
        if self.opens(123, 125):
            while True:
                self.key(&start, &end)
                if seen or not self.named(start, end, b"resourceSpans", 13):
                    raise Unusual("request field left to the typed walk")
                seen = True
                if self.opens(91, 93):
                    while True:
                        self.resource_spans()
                        if not self.more(93):
                            break
                if not self.more(125):
                    break
        while self.pos < self.size:  # only white space may follow
            c = self.buf[self.pos]
            if not (c == 0x20 or c == 0x0A or c == 0x0D or c == 0x09):
                raise Unusual("data after the JSON document")
            self.pos += 1
        return 0


cdef Py_ssize_t _utf8(uint32_t code, unsigned char* out):
    if code < 0x80:
        out[0] = <unsigned char>code
        return 1
    if code < 0x800:
        out[0] = <unsigned char>(0xC0 | (code >> 6))
        out[1] = <unsigned char>(0x80 | (code & 0x3F))
        return 2
    if code < 0x10000:
        out[0] = <unsigned char>(0xE0 | (code >> 12))
        out[1] = <unsigned char>(0x80 | ((code >> 6) & 0x3F))
        out[2] = <unsigned char>(0x80 | (code & 0x3F))
        return 3
    out[0] = <unsigned char>(0xF0 | (code >> 18))
    out[1] = <unsigned char>(0x80 | ((code >> 12) & 0x3F))
    out[2] = <unsigned char>(0x80 | ((code >> 6) & 0x3F))
    out[3] = <unsigned char>(0x80 | (code & 0x3F))
    return 4


def walk_json(
    const unsigned char[::1] data,
    bint keep_all,
    keys,
    tuple prefixes,
    Py_ssize_t max_value_size,
    keep,
    tuple suffixes=(),
):
    """(spans, rejected, first rejection reason, truncated values) of an OTLP/JSON
    trace request; ``Unusual`` or ``UnicodeDecodeError`` for what it leaves to the
    typed walk (see the contract above)."""
    cdef _JsonWalk walker = _JsonWalk()
    walker.buf = &data[0] if data.shape[0] else NULL
    walker.size = data.shape[0]
    walker.pos = 0
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
    walker.request()
    return walker.spans, walker.rejected, walker.message, walker.truncated
