"""DES_ENCRYPT/DES_DECRYPT(password, value): SeaTunnel's DES functions in Spark SQL (no UDF).

SeaTunnel encrypts with DES in CBC mode with PKCS#5 padding, the key being the first 8 bytes of
the password's UTF-8 and the IV the bytes of ``12345678``; the value's UTF-8 is encrypted and the
result written in Base64. A null password or value gives NULL; a password shorter than 8
characters is an error; a value that does not decrypt (not Base64, not whole blocks, bad padding)
is returned as it is.

Spark has no DES, so the cipher (FIPS 46-3) is written here as Spark SQL: a 64-bit block is a
BIGINT, each permutation an ``aggregate`` over its table, the 16 subkeys are computed once per row
and each block runs its 16 Feistel rounds in an ``aggregate``; CBC chains the blocks in an outer
``aggregate``. It is slow (thousands of lambda calls per 8-byte block) but exact.
"""

from __future__ import annotations

from typing import Any

from .builders import TypeOf, arity, template

# ---------------------------------------------------------------- the standard's tables (1-based bits, MSB first)

_IP = (58, 50, 42, 34, 26, 18, 10, 2, 60, 52, 44, 36, 28, 20, 12, 4, 62, 54, 46, 38, 30, 22, 14, 6,
       64, 56, 48, 40, 32, 24, 16, 8, 57, 49, 41, 33, 25, 17, 9, 1, 59, 51, 43, 35, 27, 19, 11, 3,
       61, 53, 45, 37, 29, 21, 13, 5, 63, 55, 47, 39, 31, 23, 15, 7)
_FP = tuple(_IP.index(i) + 1 for i in range(1, 65))  # the inverse of IP
_E = tuple((4 * j + k - 1) % 32 + 1 for j in range(8) for k in range(6))
_P = (16, 7, 20, 21, 29, 12, 28, 17, 1, 15, 23, 26, 5, 18, 31, 10,
      2, 8, 24, 14, 32, 27, 3, 9, 19, 13, 30, 6, 22, 11, 4, 25)
_PC1 = (57, 49, 41, 33, 25, 17, 9, 1, 58, 50, 42, 34, 26, 18, 10, 2, 59, 51, 43, 35, 27, 19, 11, 3, 60, 52, 44, 36,
        63, 55, 47, 39, 31, 23, 15, 7, 62, 54, 46, 38, 30, 22, 14, 6, 61, 53, 45, 37, 29, 21, 13, 5, 28, 20, 12, 4)
_PC2 = (14, 17, 11, 24, 1, 5, 3, 28, 15, 6, 21, 10, 23, 19, 12, 4, 26, 8, 16, 7, 27, 20, 13, 2,
        41, 52, 31, 37, 47, 55, 30, 40, 51, 45, 33, 48, 44, 49, 39, 56, 34, 53, 46, 42, 50, 36, 29, 32)
_SHIFTS = (1, 1, 2, 2, 2, 2, 2, 2, 1, 2, 2, 2, 2, 2, 2, 1)
_SBOXES = (
    (14, 4, 13, 1, 2, 15, 11, 8, 3, 10, 6, 12, 5, 9, 0, 7, 0, 15, 7, 4, 14, 2, 13, 1, 10, 6, 12, 11, 9, 5, 3, 8,
     4, 1, 14, 8, 13, 6, 2, 11, 15, 12, 9, 7, 3, 10, 5, 0, 15, 12, 8, 2, 4, 9, 1, 7, 5, 11, 3, 14, 10, 0, 6, 13),
    (15, 1, 8, 14, 6, 11, 3, 4, 9, 7, 2, 13, 12, 0, 5, 10, 3, 13, 4, 7, 15, 2, 8, 14, 12, 0, 1, 10, 6, 9, 11, 5,
     0, 14, 7, 11, 10, 4, 13, 1, 5, 8, 12, 6, 9, 3, 2, 15, 13, 8, 10, 1, 3, 15, 4, 2, 11, 6, 7, 12, 0, 5, 14, 9),
    (10, 0, 9, 14, 6, 3, 15, 5, 1, 13, 12, 7, 11, 4, 2, 8, 13, 7, 0, 9, 3, 4, 6, 10, 2, 8, 5, 14, 12, 11, 15, 1,
     13, 6, 4, 9, 8, 15, 3, 0, 11, 1, 2, 12, 5, 10, 14, 7, 1, 10, 13, 0, 6, 9, 8, 7, 4, 15, 14, 3, 11, 5, 2, 12),
    (7, 13, 14, 3, 0, 6, 9, 10, 1, 2, 8, 5, 11, 12, 4, 15, 13, 8, 11, 5, 6, 15, 0, 3, 4, 7, 2, 12, 1, 10, 14, 9,
     10, 6, 9, 0, 12, 11, 7, 13, 15, 1, 3, 14, 5, 2, 8, 4, 3, 15, 0, 6, 10, 1, 13, 8, 9, 4, 5, 11, 12, 7, 2, 14),
    (2, 12, 4, 1, 7, 10, 11, 6, 8, 5, 3, 15, 13, 0, 14, 9, 14, 11, 2, 12, 4, 7, 13, 1, 5, 0, 15, 10, 3, 9, 8, 6,
     4, 2, 1, 11, 10, 13, 7, 8, 15, 9, 12, 5, 6, 3, 0, 14, 11, 8, 12, 7, 1, 14, 2, 13, 6, 15, 0, 9, 10, 4, 5, 3),
    (12, 1, 10, 15, 9, 2, 6, 8, 0, 13, 3, 4, 14, 7, 5, 11, 10, 15, 4, 2, 7, 12, 9, 5, 6, 1, 13, 14, 0, 11, 3, 8,
     9, 14, 15, 5, 2, 8, 12, 3, 7, 0, 4, 10, 1, 13, 11, 6, 4, 3, 2, 12, 9, 5, 15, 10, 11, 14, 1, 7, 6, 0, 8, 13),
    (4, 11, 2, 14, 15, 0, 8, 13, 3, 12, 9, 7, 5, 10, 6, 1, 13, 0, 11, 7, 4, 9, 1, 10, 14, 3, 5, 12, 2, 15, 8, 6,
     1, 4, 11, 13, 12, 3, 7, 14, 10, 15, 6, 8, 0, 5, 9, 2, 6, 11, 13, 8, 1, 4, 10, 7, 9, 5, 0, 15, 14, 2, 3, 12),
    (13, 2, 8, 4, 6, 15, 11, 1, 10, 9, 3, 14, 5, 0, 12, 7, 1, 15, 13, 8, 10, 3, 7, 4, 12, 5, 6, 11, 0, 14, 9, 2,
     7, 11, 4, 1, 9, 12, 14, 2, 0, 6, 10, 13, 15, 3, 5, 8, 2, 1, 14, 7, 4, 10, 8, 13, 15, 12, 9, 0, 3, 5, 6, 11),
)
_IV = 0x3132333435363738  # the bytes of "12345678"
_MASK28 = (1 << 28) - 1
_MASK32 = (1 << 32) - 1


def _let(value: str, var: str, body: str) -> str:
    """``body`` with ``var`` bound to ``value``, computed once (a one-element TRANSFORM)."""
    return f"TRANSFORM(ARRAY({value}), {var} -> {body})[0]"


def _array(values: tuple[int, ...]) -> str:
    return "ARRAY(" + ", ".join(str(v) for v in values) + ")"


def _permute(x: str, table: tuple[int, ...], width: int, var: str) -> str:
    """``x`` (a ``width``-bit BIGINT) with its bits taken in ``table``'s order (1-based, MSB first)."""
    n = len(table)
    return (f"AGGREGATE(SEQUENCE(0, {n - 1}), CAST(0 AS BIGINT), ({var}a, {var}i) -> {var}a | SHIFTLEFT("
            f"SHIFTRIGHTUNSIGNED({x}, {width} - ELEMENT_AT({_array(table)}, {var}i + 1)) & 1, {n - 1} - {var}i))")


def _feistel(r: str, k: str) -> str:
    """DES's f(R, K): expand, mix in the subkey, the S-boxes, then P."""
    mixed = f"({_permute(r, _E, 32, 'e')} ^ {k})"
    six = "(SHIFTRIGHTUNSIGNED(mx, 42 - 6 * sj) & 63)"
    index = f"CAST(sj * 64 + ((SHIFTRIGHT({six}, 4) & 2) | ({six} & 1)) * 16 + (SHIFTRIGHT({six}, 1) & 15) + 1 AS INT)"
    flat = tuple(v for box in _SBOXES for v in box)
    substituted = (f"AGGREGATE(SEQUENCE(0, 7), CAST(0 AS BIGINT), (sa, sj) -> sa | "
                   f"SHIFTLEFT(CAST(ELEMENT_AT({_array(flat)}, {index}) AS BIGINT), 28 - 4 * sj))")
    return _let(mixed, "mx", _permute(substituted, _P, 32, "p"))


def _crypt(block: str, keys: str, decrypt: bool) -> str:
    """One 64-bit block through IP, 16 rounds (subkeys in reverse to decrypt) and FP."""
    ip = _permute(block, _IP, 64, "i")
    key = f"ELEMENT_AT({keys}, {'16 - rr' if decrypt else 'rr + 1'})"
    rounds = ("AGGREGATE(SEQUENCE(0, 15), NAMED_STRUCT('l', SHIFTRIGHTUNSIGNED(ipv, 32), 'r', ipv & "
              f"{_MASK32}), "
              f"(ra, rr) -> NAMED_STRUCT('l', ra.r, 'r', ra.l ^ {_feistel('ra.r', key)}), "
              f"ra -> SHIFTLEFT(ra.r, 32) | ra.l)")
    return _permute(_let(ip, "ipv", rounds), _FP, 64, "f")


def _subkeys(key_hex: str) -> str:
    """The 16 48-bit subkeys of the key whose 8 bytes are the hex text ``key_hex``."""
    pc1 = _permute(_block(key_hex, "1"), _PC1, 64, "k")
    rotate = ("(SHIFTLEFT({v}, ELEMENT_AT({s}, kr + 1)) | SHIFTRIGHTUNSIGNED({v}, 28 - ELEMENT_AT({s}, kr + 1))) "
              f"& {_MASK28}")
    c = rotate.format(v="ka.c", s=_array(_SHIFTS))
    d = rotate.format(v="ka.d", s=_array(_SHIFTS))
    pc2 = _permute(f"(SHIFTLEFT({c}, 28) | {d})", _PC2, 56, "q")
    keys = (f"AGGREGATE(SEQUENCE(0, 15), NAMED_STRUCT('c', SHIFTRIGHTUNSIGNED(pcv, 28), 'd', pcv & {_MASK28}, "
            f"'k', CAST(ARRAY() AS ARRAY<BIGINT>)), (ka, kr) -> NAMED_STRUCT('c', {c}, 'd', {d}, "
            f"'k', CONCAT(ka.k, ARRAY({pc2}))), ka -> ka.k)")
    return _let(pc1, "pcv", keys)


def _block(hex_text: str, start: str) -> str:
    """The BIGINT of the 16 hex digits of ``hex_text`` from ``start`` (1-based)."""
    return (f"(SHIFTLEFT(CAST(CONV(SUBSTRING({hex_text}, {start}, 8), 16, 10) AS BIGINT), 32) | "
            f"CAST(CONV(SUBSTRING({hex_text}, {start} + 8, 8), 16, 10) AS BIGINT))")


def _cbc(data_hex: str, key_hex: str, decrypt: bool) -> str:
    """The hex text of ``data_hex`` (whole blocks) through DES-CBC with SeaTunnel's IV."""
    blocks = "CAST(LENGTH(dh) / 16 AS INT)"
    block = _block("dh", "16 * cb + 1")
    if decrypt:  # P_i = D(C_i) ^ C_(i-1): every block at once
        previous = f"CASE WHEN cb = 0 THEN {_IV} ELSE {_block('dh', '16 * cb - 15')} END"
        chained = f"TRANSFORM(SEQUENCE(0, {blocks} - 1), cb -> {_crypt(block, 'kk', True)} ^ {previous})"
    else:  # C_i = E(P_i ^ C_(i-1)): one after the other
        step = _crypt(f"({block} ^ ELEMENT_AT(co, -1))", "kk", False)
        chained = (f"SLICE(AGGREGATE(SEQUENCE(0, {blocks} - 1), ARRAY(CAST({_IV} AS BIGINT)), "
                   f"(co, cb) -> CONCAT(co, ARRAY({step}))), 2, {blocks})")
    joined = f"ARRAY_JOIN(TRANSFORM({chained}, x -> LPAD(HEX(x), 16, '0')), '')"
    return _let(data_hex, "dh", _let(_subkeys(key_hex), "kk", joined))


_KEY = "SUBSTRING(HEX(ENCODE(_password, 'UTF-8')), 1, 16)"
_SHORT = "RAISE_ERROR('{name}: the password must be at least 8 characters')"
_PADDED = ("CONCAT(HEX(ENCODE(_value, 'UTF-8')), REPEAT(LPAD(HEX(8 - OCTET_LENGTH(_value) % 8), 2, '0'), "
           "8 - OCTET_LENGTH(_value) % 8))")
_ENCRYPT = ("CASE WHEN _password IS NULL OR _value IS NULL THEN NULL WHEN CHAR_LENGTH(_password) < 8 THEN {short} "
            "ELSE BASE64(UNHEX({cbc})) END")
#: the value's ciphertext as hex, NULL where it is not Base64 of whole blocks
_CIPHER = ("CASE WHEN LENGTH(HEX(TRY_TO_BINARY(_value, 'base64'))) > 0 "
           "AND LENGTH(HEX(TRY_TO_BINARY(_value, 'base64'))) % 16 = 0 THEN HEX(TRY_TO_BINARY(_value, 'base64')) END")
_DECRYPT = ("CASE WHEN _password IS NULL OR _value IS NULL THEN NULL WHEN CHAR_LENGTH(_password) < 8 THEN {short} "
            "WHEN ({cipher}) IS NULL THEN _value "
            "ELSE COALESCE(TRANSFORM(ARRAY({cbc}), h -> CASE "
            "WHEN CAST(CONV(RIGHT(h, 2), 16, 10) AS INT) BETWEEN 1 AND 8 AND RIGHT(h, CAST(CONV(RIGHT(h, 2), 16, 10) "
            "AS INT) * 2) = REPEAT(RIGHT(h, 2), CAST(CONV(RIGHT(h, 2), 16, 10) AS INT)) "
            "THEN MAKE_VALID_UTF8(CAST(UNHEX(LEFT(h, LENGTH(h) - CAST(CONV(RIGHT(h, 2), 16, 10) AS INT) * 2)) "
            "AS STRING)) END)[0], _value) END")


def _encrypt(name: str, a: list[Any], type_of: TypeOf) -> Any:
    arity(name, a, 2)
    sql = _ENCRYPT.format(short=_SHORT.format(name=name), cbc=_cbc(_PADDED, _KEY, decrypt=False))
    return template(sql, password=a[0], value=a[1])


def _decrypt(name: str, a: list[Any], type_of: TypeOf) -> Any:
    arity(name, a, 2)
    sql = _DECRYPT.format(short=_SHORT.format(name=name), cipher=_CIPHER,
                          cbc=_cbc(_CIPHER, _KEY, decrypt=True))
    return template(sql, password=a[0], value=a[1])


DES_REWRITERS = {"DES_ENCRYPT": _encrypt, "DES_DECRYPT": _decrypt}
DES_TYPES = {"DES_ENCRYPT": "string", "DES_DECRYPT": "string"}
