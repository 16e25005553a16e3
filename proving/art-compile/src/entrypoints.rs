//! The quick entrypoints the harness serves from its class linker rather than as runtime
//! functions (`runtime`): the invoke trampolines and the instance field entrypoints. Their own
//! module because the machine (`emu`: which trap is an invoke), the dispatcher in unicorn
//! (`dispatch`) and the native child's stubs (`native_dispatch`) all follow these tables, and
//! the machine must not depend on the dispatcher (which makes machines).

/// The invoke type a trampoline stands for (runtime/invoke_type.h); its number is the one the
/// native child's trampolines pass (`crate::native_dispatch`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InvokeKind {
    Static = 0,
    Direct = 1,
    Virtual = 2,
    Super = 3,
    Interface = 4,
}

impl InvokeKind {
    pub const ALL: [InvokeKind; 5] = [
        InvokeKind::Static,
        InvokeKind::Direct,
        InvokeKind::Virtual,
        InvokeKind::Super,
        InvokeKind::Interface,
    ];

    /// The name of its `p<Kind>TrampolineWithAccessCheck` entrypoint, without the `p`.
    pub fn entrypoint(self) -> &'static str {
        match self {
            InvokeKind::Static => "InvokeStaticTrampolineWithAccessCheck",
            InvokeKind::Direct => "InvokeDirectTrampolineWithAccessCheck",
            InvokeKind::Virtual => "InvokeVirtualTrampolineWithAccessCheck",
            InvokeKind::Super => "InvokeSuperTrampolineWithAccessCheck",
            InvokeKind::Interface => "InvokeInterfaceTrampolineWithAccessCheck",
        }
    }

    /// The kind of the trampoline entrypoint `name` (without the `p`).
    pub fn of_entrypoint(name: &str) -> Option<InvokeKind> {
        InvokeKind::ALL.into_iter().find(|k| k.entrypoint() == name)
    }

    /// The kind of an invoke instruction (`invoke-virtual`, `/range` or not).
    pub(crate) fn of_opcode(opcode: &str) -> Option<InvokeKind> {
        let op = opcode.trim_end_matches("/range");
        InvokeKind::ALL.into_iter().find(|k| k.opcode() == op)
    }

    /// The dex opcode's name without `/range` (`Instruction::Name`).
    pub(crate) fn opcode(self) -> &'static str {
        match self {
            InvokeKind::Static => "invoke-static",
            InvokeKind::Direct => "invoke-direct",
            InvokeKind::Virtual => "invoke-virtual",
            InvokeKind::Super => "invoke-super",
            InvokeKind::Interface => "invoke-interface",
        }
    }
}

/// The instance field entrypoints (quick_entrypoints_list.h: Get{Boolean,Byte,Char,Short,32,
/// 64,Obj}Instance, Set{8,16,32,64,Obj}Instance): name, is a get, bits it moves. The native
/// child's stubs follow this order (`crate::native_dispatch`).
pub const FIELD_ENTRYPOINTS: [(&str, bool, u32); 12] = [
    ("GetBooleanInstance", true, 8),
    ("GetByteInstance", true, 8),
    ("GetCharInstance", true, 16),
    ("GetShortInstance", true, 16),
    ("Get32Instance", true, 32),
    ("Get64Instance", true, 64),
    ("GetObjInstance", true, 32),
    ("Set8Instance", false, 8),
    ("Set16Instance", false, 16),
    ("Set32Instance", false, 32),
    ("Set64Instance", false, 64),
    ("SetObjInstance", false, 32),
];

/// Whether `name` is an instance field entrypoint, and which: (is a get, bits it moves).
pub(crate) fn field_entrypoint(name: &str) -> Option<(bool, u32)> {
    FIELD_ENTRYPOINTS
        .iter()
        .find(|e| e.0 == name)
        .map(|&(_, get, width)| (get, width))
}
