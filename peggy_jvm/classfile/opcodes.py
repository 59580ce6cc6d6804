"""The JVM opcode table: every opcode's number, mnemonic and operand format (JVMS chapter 6).

Owns: :class:`Operand` (the encoding shape of an instruction's operands), :data:`OPCODES` (opcode -> info),
:data:`BY_NAME`, and module constants for each opcode (``ILOAD``, ``GOTO_W``, ...). Everything that decodes,
encodes or assembles bytecode reads this one table; the verification-type behaviour of opcodes lives in
:mod:`.frames`.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Operand(Enum):
    NONE = 0
    S1 = 1  # bipush: signed byte
    S2 = 2  # sipush: signed short
    LOCAL = 3  # u1 local index (u2 under wide)
    CP1 = 4  # ldc: u1 pool index
    CP2 = 5  # u2 pool index
    IINC = 6  # u1 local, s1 const (u2, s2 under wide)
    BRANCH2 = 7  # s2 relative offset
    BRANCH4 = 8  # s4 relative offset
    TABLESWITCH = 9
    LOOKUPSWITCH = 10
    INVOKEINTERFACE = 11  # u2 pool index, u1 count, u1 0
    INVOKEDYNAMIC = 12  # u2 pool index, u1 0, u1 0
    NEWARRAY = 13  # u1 array type code
    MULTIANEWARRAY = 14  # u2 pool index, u1 dimensions
    WIDE = 15  # prefix


@dataclass(frozen=True, slots=True)
class OpInfo:
    opcode: int
    name: str
    operand: Operand

    @property
    def size(self) -> int:
        """Fixed byte length (opcode included); switches and wide return 0 (variable)."""
        return _SIZES[self.operand]


_SIZES = {Operand.NONE: 1, Operand.S1: 2, Operand.S2: 3, Operand.LOCAL: 2, Operand.CP1: 2, Operand.CP2: 3,
          Operand.IINC: 3, Operand.BRANCH2: 3, Operand.BRANCH4: 5, Operand.TABLESWITCH: 0,
          Operand.LOOKUPSWITCH: 0, Operand.INVOKEINTERFACE: 5, Operand.INVOKEDYNAMIC: 5, Operand.NEWARRAY: 2,
          Operand.MULTIANEWARRAY: 4, Operand.WIDE: 0}

_N, _L, _B = Operand.NONE, Operand.LOCAL, Operand.BRANCH2
_TABLE: list[tuple[int, str, Operand]] = [
    (0x00, "nop", _N), (0x01, "aconst_null", _N), (0x02, "iconst_m1", _N), (0x03, "iconst_0", _N),
    (0x04, "iconst_1", _N), (0x05, "iconst_2", _N), (0x06, "iconst_3", _N), (0x07, "iconst_4", _N),
    (0x08, "iconst_5", _N), (0x09, "lconst_0", _N), (0x0a, "lconst_1", _N), (0x0b, "fconst_0", _N),
    (0x0c, "fconst_1", _N), (0x0d, "fconst_2", _N), (0x0e, "dconst_0", _N), (0x0f, "dconst_1", _N),
    (0x10, "bipush", Operand.S1), (0x11, "sipush", Operand.S2), (0x12, "ldc", Operand.CP1),
    (0x13, "ldc_w", Operand.CP2), (0x14, "ldc2_w", Operand.CP2),
    (0x15, "iload", _L), (0x16, "lload", _L), (0x17, "fload", _L), (0x18, "dload", _L), (0x19, "aload", _L),
    (0x1a, "iload_0", _N), (0x1b, "iload_1", _N), (0x1c, "iload_2", _N), (0x1d, "iload_3", _N),
    (0x1e, "lload_0", _N), (0x1f, "lload_1", _N), (0x20, "lload_2", _N), (0x21, "lload_3", _N),
    (0x22, "fload_0", _N), (0x23, "fload_1", _N), (0x24, "fload_2", _N), (0x25, "fload_3", _N),
    (0x26, "dload_0", _N), (0x27, "dload_1", _N), (0x28, "dload_2", _N), (0x29, "dload_3", _N),
    (0x2a, "aload_0", _N), (0x2b, "aload_1", _N), (0x2c, "aload_2", _N), (0x2d, "aload_3", _N),
    (0x2e, "iaload", _N), (0x2f, "laload", _N), (0x30, "faload", _N), (0x31, "daload", _N),
    (0x32, "aaload", _N), (0x33, "baload", _N), (0x34, "caload", _N), (0x35, "saload", _N),
    (0x36, "istore", _L), (0x37, "lstore", _L), (0x38, "fstore", _L), (0x39, "dstore", _L), (0x3a, "astore", _L),
    (0x3b, "istore_0", _N), (0x3c, "istore_1", _N), (0x3d, "istore_2", _N), (0x3e, "istore_3", _N),
    (0x3f, "lstore_0", _N), (0x40, "lstore_1", _N), (0x41, "lstore_2", _N), (0x42, "lstore_3", _N),
    (0x43, "fstore_0", _N), (0x44, "fstore_1", _N), (0x45, "fstore_2", _N), (0x46, "fstore_3", _N),
    (0x47, "dstore_0", _N), (0x48, "dstore_1", _N), (0x49, "dstore_2", _N), (0x4a, "dstore_3", _N),
    (0x4b, "astore_0", _N), (0x4c, "astore_1", _N), (0x4d, "astore_2", _N), (0x4e, "astore_3", _N),
    (0x4f, "iastore", _N), (0x50, "lastore", _N), (0x51, "fastore", _N), (0x52, "dastore", _N),
    (0x53, "aastore", _N), (0x54, "bastore", _N), (0x55, "castore", _N), (0x56, "sastore", _N),
    (0x57, "pop", _N), (0x58, "pop2", _N), (0x59, "dup", _N), (0x5a, "dup_x1", _N), (0x5b, "dup_x2", _N),
    (0x5c, "dup2", _N), (0x5d, "dup2_x1", _N), (0x5e, "dup2_x2", _N), (0x5f, "swap", _N),
    (0x60, "iadd", _N), (0x61, "ladd", _N), (0x62, "fadd", _N), (0x63, "dadd", _N),
    (0x64, "isub", _N), (0x65, "lsub", _N), (0x66, "fsub", _N), (0x67, "dsub", _N),
    (0x68, "imul", _N), (0x69, "lmul", _N), (0x6a, "fmul", _N), (0x6b, "dmul", _N),
    (0x6c, "idiv", _N), (0x6d, "ldiv", _N), (0x6e, "fdiv", _N), (0x6f, "ddiv", _N),
    (0x70, "irem", _N), (0x71, "lrem", _N), (0x72, "frem", _N), (0x73, "drem", _N),
    (0x74, "ineg", _N), (0x75, "lneg", _N), (0x76, "fneg", _N), (0x77, "dneg", _N),
    (0x78, "ishl", _N), (0x79, "lshl", _N), (0x7a, "ishr", _N), (0x7b, "lshr", _N),
    (0x7c, "iushr", _N), (0x7d, "lushr", _N), (0x7e, "iand", _N), (0x7f, "land", _N),
    (0x80, "ior", _N), (0x81, "lor", _N), (0x82, "ixor", _N), (0x83, "lxor", _N),
    (0x84, "iinc", Operand.IINC),
    (0x85, "i2l", _N), (0x86, "i2f", _N), (0x87, "i2d", _N), (0x88, "l2i", _N), (0x89, "l2f", _N),
    (0x8a, "l2d", _N), (0x8b, "f2i", _N), (0x8c, "f2l", _N), (0x8d, "f2d", _N), (0x8e, "d2i", _N),
    (0x8f, "d2l", _N), (0x90, "d2f", _N), (0x91, "i2b", _N), (0x92, "i2c", _N), (0x93, "i2s", _N),
    (0x94, "lcmp", _N), (0x95, "fcmpl", _N), (0x96, "fcmpg", _N), (0x97, "dcmpl", _N), (0x98, "dcmpg", _N),
    (0x99, "ifeq", _B), (0x9a, "ifne", _B), (0x9b, "iflt", _B), (0x9c, "ifge", _B), (0x9d, "ifgt", _B),
    (0x9e, "ifle", _B), (0x9f, "if_icmpeq", _B), (0xa0, "if_icmpne", _B), (0xa1, "if_icmplt", _B),
    (0xa2, "if_icmpge", _B), (0xa3, "if_icmpgt", _B), (0xa4, "if_icmple", _B), (0xa5, "if_acmpeq", _B),
    (0xa6, "if_acmpne", _B), (0xa7, "goto", _B), (0xa8, "jsr", _B), (0xa9, "ret", _L),
    (0xaa, "tableswitch", Operand.TABLESWITCH), (0xab, "lookupswitch", Operand.LOOKUPSWITCH),
    (0xac, "ireturn", _N), (0xad, "lreturn", _N), (0xae, "freturn", _N), (0xaf, "dreturn", _N),
    (0xb0, "areturn", _N), (0xb1, "return", _N),
    (0xb2, "getstatic", Operand.CP2), (0xb3, "putstatic", Operand.CP2), (0xb4, "getfield", Operand.CP2),
    (0xb5, "putfield", Operand.CP2), (0xb6, "invokevirtual", Operand.CP2),
    (0xb7, "invokespecial", Operand.CP2), (0xb8, "invokestatic", Operand.CP2),
    (0xb9, "invokeinterface", Operand.INVOKEINTERFACE), (0xba, "invokedynamic", Operand.INVOKEDYNAMIC),
    (0xbb, "new", Operand.CP2), (0xbc, "newarray", Operand.NEWARRAY), (0xbd, "anewarray", Operand.CP2),
    (0xbe, "arraylength", _N), (0xbf, "athrow", _N), (0xc0, "checkcast", Operand.CP2),
    (0xc1, "instanceof", Operand.CP2), (0xc2, "monitorenter", _N), (0xc3, "monitorexit", _N),
    (0xc4, "wide", Operand.WIDE), (0xc5, "multianewarray", Operand.MULTIANEWARRAY),
    (0xc6, "ifnull", _B), (0xc7, "ifnonnull", _B), (0xc8, "goto_w", Operand.BRANCH4),
    (0xc9, "jsr_w", Operand.BRANCH4),
]

OPCODES: dict[int, OpInfo] = {op: OpInfo(op, name, kind) for op, name, kind in _TABLE}
BY_NAME: dict[str, OpInfo] = {info.name: info for info in OPCODES.values()}
# Dense lookup tables for the hot decoding loop (None = invalid opcode).
OPERAND_OF: list[Operand | None] = [OPCODES[i].operand if i in OPCODES else None for i in range(256)]
NAME_OF: list[str | None] = [OPCODES[i].name if i in OPCODES else None for i in range(256)]

globals().update({name.upper(): op for op, name, _ in _TABLE})
# the constants code names, spelled out again so that a type checker sees them (the table sets them all;
# tests/test_bytecode.py checks the two agree)
NOP = 0x00; ACONST_NULL = 0x01; ICONST_M1 = 0x02; ICONST_0 = 0x03; ICONST_5 = 0x08  # noqa: E702
BIPUSH = 0x10; SIPUSH = 0x11; LDC = 0x12; LDC_W = 0x13; LDC2_W = 0x14  # noqa: E702
ILOAD = 0x15; LLOAD = 0x16; FLOAD = 0x17; DLOAD = 0x18; ALOAD = 0x19  # noqa: E702
ILOAD_0 = 0x1a; ALOAD_3 = 0x2d  # noqa: E702
CALOAD = 0x34  # noqa: E702
ISTORE = 0x36; LSTORE = 0x37; FSTORE = 0x38; DSTORE = 0x39; ASTORE = 0x3a  # noqa: E702
ISTORE_0 = 0x3b; ASTORE_3 = 0x4e  # noqa: E702
POP = 0x57; POP2 = 0x58; DUP = 0x59; DUP2 = 0x5c; SWAP = 0x5f; ARRAYLENGTH = 0xbe  # noqa: E702
IINC = 0x84; IFEQ = 0x99; IF_ACMPNE = 0xa6; GOTO = 0xa7; JSR = 0xa8; RET = 0xa9  # noqa: E702
TABLESWITCH = 0xaa; LOOKUPSWITCH = 0xab; IRETURN = 0xac; ARETURN = 0xb0; RETURN = 0xb1  # noqa: E702
DUP = 0x59; AASTORE = 0x53  # noqa: E702
GETSTATIC = 0xb2; PUTSTATIC = 0xb3; GETFIELD = 0xb4; PUTFIELD = 0xb5  # noqa: E702
INVOKEVIRTUAL = 0xb6; INVOKESPECIAL = 0xb7; INVOKESTATIC = 0xb8; INVOKEINTERFACE = 0xb9  # noqa: E702
INVOKEDYNAMIC = 0xba; NEW = 0xbb; NEWARRAY = 0xbc; ANEWARRAY = 0xbd; ATHROW = 0xbf  # noqa: E702
CHECKCAST = 0xc0; INSTANCEOF = 0xc1; MONITORENTER = 0xc2; MONITOREXIT = 0xc3; WIDE = 0xc4  # noqa: E702
MULTIANEWARRAY = 0xc5  # noqa: E702
IFNULL = 0xc6; IFNONNULL = 0xc7; GOTO_W = 0xc8; JSR_W = 0xc9  # noqa: E702

#: conditional branches -> their negation (used to turn a far conditional jump into `if!cond; goto_w`)
INVERTED_BRANCH: dict[int, int] = {}
for _a, _b in ((0x99, 0x9a), (0x9b, 0x9c), (0x9d, 0x9e), (0x9f, 0xa0), (0xa1, 0xa2), (0xa3, 0xa4),
               (0xa5, 0xa6), (0xc6, 0xc7)):
    INVERTED_BRANCH[_a] = _b
    INVERTED_BRANCH[_b] = _a
CONDITIONAL_BRANCHES = frozenset(INVERTED_BRANCH)
#: instructions after which control never falls through to the next one
NO_FALLTHROUGH = frozenset({GOTO, GOTO_W, RET, TABLESWITCH, LOOKUPSWITCH, ATHROW, 0xac, 0xad, 0xae, 0xaf,
                            0xb0, RETURN})

#: `newarray` type codes -> array descriptor
NEWARRAY_TYPES = {4: "[Z", 5: "[C", 6: "[F", 7: "[D", 8: "[B", 9: "[S", 10: "[I", 11: "[J"}
NEWARRAY_NAMES = {4: "boolean", 5: "char", 6: "float", 7: "double", 8: "byte", 9: "short", 10: "int",
                  11: "long"}

#: the implicit-operand short forms: opcode -> (base opcode with an explicit local, local index)
SHORT_FORMS: dict[int, tuple[int, int]] = {}
for _base, _first in ((ILOAD, 0x1a), (LLOAD, 0x1e), (FLOAD, 0x22), (DLOAD, 0x26), (ALOAD, 0x2a),
                      (ISTORE, 0x3b), (LSTORE, 0x3f), (FSTORE, 0x43), (DSTORE, 0x47), (ASTORE, 0x4b)):
    for _k in range(4):
        SHORT_FORMS[_first + _k] = (_base, _k)
#: (base opcode, local) -> short form
SHORT_FORM_OF: dict[tuple[int, int], int] = {v: k for k, v in SHORT_FORMS.items()}
