"""The symbols an ELF object file defines, read from its symbol table (for the lean cache load).

numba's disk cache keeps each compiled function twice: as machine code (an ELF object on Linux and the
BSDs) and as LLVM bitcode for linking into later compilations. Loading it, numba parses the bitcode
only to learn which symbols the object defines: 0.04 s of the first parsed sentence for clparse's
kernels. The object's own symbol table says the same in well under a millisecond.
:func:`defined_symbols` reads it; anything but a 64-bit little-endian ELF object gives None, and the
caller then loads as numba does.
"""

from __future__ import annotations

import struct

_ELF_MAGIC = b"\x7fELF"
_CLASS_64, _LITTLE_ENDIAN = 2, 1
_SECTION_HEADER = struct.Struct("<IIQQQQIIQQ")  # Elf64_Shdr
_SYMBOL = struct.Struct("<IBBHQQ")  # Elf64_Sym: name, info, other, section index, value, size
_SHT_SYMTAB, _SHT_STRTAB = 2, 3
_SHN_UNDEF = 0
# Section and file symbols name no function or variable (the bitcode's list has neither).
_STT_SECTION, _STT_FILE = 3, 4


def defined_symbols(data: bytes) -> set[str] | None:
    """Names of the functions and variables ``data`` (an ELF object) defines, or None if ``data`` is
    not a 64-bit little-endian ELF object, its tables do not fit inside it, or it lists no defined
    symbol at all (no symbol table, or extended section numbering, which this reader does not follow):
    an empty list would leave numba a null entry point, so the caller must load numba's way then."""
    if len(data) < 64 or data[:4] != _ELF_MAGIC or data[4] != _CLASS_64 or data[5] != _LITTLE_ENDIAN:
        return None
    try:
        (section_offset,) = struct.unpack_from("<Q", data, 0x28)
        entry_size, count = struct.unpack_from("<HH", data, 0x3A)
        if entry_size != _SECTION_HEADER.size or count == 0 or section_offset == 0:
            return None  # count 0: more than 0xff00 sections, the real count kept elsewhere
        sections = [_SECTION_HEADER.unpack_from(data, section_offset + i * entry_size) for i in range(count)]
        names: set[str] = set()
        for _, kind, _, _, offset, size, link, _, _, _ in sections:
            if kind != _SHT_SYMTAB:
                continue
            _, string_kind, _, _, strings, strings_size, _, _, _, _ = sections[link]
            if offset + size > len(data) or string_kind != _SHT_STRTAB or strings + strings_size > len(data):
                return None
            for name, info, _, section, _, _ in _SYMBOL.iter_unpack(data[offset:offset + size]):
                if section == _SHN_UNDEF or (info & 0xF) in (_STT_SECTION, _STT_FILE):
                    continue
                if name >= strings_size:
                    return None
                start = strings + name
                names.add(data[start:data.index(b"\0", start, strings + strings_size)].decode("utf-8"))
        return names or None
    except (struct.error, IndexError, ValueError):  # truncated or inconsistent: numba's own way
        return None
