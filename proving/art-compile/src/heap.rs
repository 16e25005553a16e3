//! The harness's class linker and heap: what instance methods need from the runtime.
//!
//! With the compiler's stand-ins (cpp/stand-in-*.patch: no method, field or type resolves),
//! compiled code reaches objects only through the runtime: an instance field through the field
//! entrypoints (`artGet32InstanceFromCompiledCode(field_idx, obj, self)` & co.,
//! runtime/entrypoints/quick/quick_field_entrypoints.cc), a call on an object through the invoke
//! trampolines (`crate::dispatch`). So the object layout below is the harness's own (no
//! compiled code reads a field offset); what must be ART's is the semantics of each lookup,
//! each cited where it is done:
//!
//! * classes from the dex itself (`hubble-compile-method DEX --classes`: the class_defs, their
//!   superclasses, interfaces, instance fields and methods, what ClassLinker::LoadClass reads);
//! * an object is `klass_` (a 32-bit heap reference, mirror::Object::ClassOffset() = 0), the
//!   monitor word, then one 8-byte slot per instance field, the superclasses' first (as
//!   ClassLinker::LinkFields orders by hierarchy); everything below 4 GiB, as ART's heap is
//!   (compressed references);
//! * a class object is a 64-byte slot of the class page; only its address is read (the
//!   receiver's class, for virtual and interface dispatch).
//!
//! What is not modelled: class initialization (no `<clinit>` runs: the corpus's classes have
//! none), static fields, java.lang.Object's own methods (the boot class path is not loaded),
//! and access checks beyond the static/instance and interface/class ones ICCE reports.

use std::collections::HashMap;

use unicorn_engine::Unicorn;

/// Where objects live, in every emulated machine (free in both address layouts of `emu`).
pub const HEAP_BASE: u64 = 0x0800_0000;
pub const HEAP_SIZE: u64 = 0x10_0000;
/// Bytes between the objects the harness lays out before a call (`object_address`).
pub const OBJECT_STRIDE: u64 = 0x200;
/// Where the class objects live.
pub const CLASS_BASE: u64 = 0x0900_0000;
pub const CLASS_SIZE: u64 = 0x1_0000;
const CLASS_STRIDE: u64 = 0x40;
/// The object header: `klass_` and `monitor_` (mirror::Object, runtime/mirror/object.h).
const HEADER: u64 = 8;
/// Exception objects the runtime creates (`Thread::ThrowNewException`) during a call: the upper
/// half of the heap, one 16-byte object each (its class; no message, no stack trace).
const EXCEPTIONS_BASE: u64 = HEAP_BASE + HEAP_SIZE / 2;
const EXCEPTION_STRIDE: u64 = 16;
/// The boot class path's exception classes the harness's runtime throws: their class objects
/// follow the dex's in the class page.
const BOOT_EXCEPTIONS: &[&str] = &[
    "java.lang.ArithmeticException",
    "java.lang.NullPointerException",
    "java.lang.ArrayIndexOutOfBoundsException",
    "java.lang.NoSuchMethodError",
    "java.lang.NoSuchFieldError",
    "java.lang.AbstractMethodError",
    "java.lang.IncompatibleClassChangeError",
];
const BOOT_CLASSES: u64 = CLASS_BASE + CLASS_SIZE / 2;

/// dex access flags (libdexfile/dex/modifiers.h).
pub const ACC_PRIVATE: u32 = 0x0002;
pub const ACC_STATIC: u32 = 0x0008;
pub const ACC_NATIVE: u32 = 0x0100;
pub const ACC_INTERFACE: u32 = 0x0200;
pub const ACC_ABSTRACT: u32 = 0x0400;
pub const ACC_CONSTRUCTOR: u32 = 0x1_0000;

/// A method a class defines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MethodDef {
    pub access: u32,
    /// `LFoo;->bar(II)I`.
    pub descriptor: String,
}

impl MethodDef {
    /// `bar(II)I`: what overriding matches on (name and signature).
    pub fn name_sig(&self) -> &str {
        name_sig(&self.descriptor)
    }
    fn is(&self, flag: u32) -> bool {
        self.access & flag != 0
    }
    /// A vtable method: not static, not private, not a constructor
    /// (ClassLinker::LinkVirtualMethods takes the class's virtual methods: the dex's
    /// virtual_methods list, which holds exactly those).
    fn is_virtual(&self) -> bool {
        !self.is(ACC_STATIC) && !self.is(ACC_PRIVATE) && !self.is(ACC_CONSTRUCTOR)
    }
}

fn name_sig(descriptor: &str) -> &str {
    descriptor.split_once(";->").map_or(descriptor, |(_, s)| s)
}

/// The class part of `LFoo;->bar(II)I`.
pub fn class_of_descriptor(descriptor: &str) -> &str {
    descriptor.split_once("->").map_or(descriptor, |(c, _)| c)
}

/// A class the dex defines.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClassDef {
    pub descriptor: String,
    pub superclass: Option<String>,
    pub access: u32,
    pub interfaces: Vec<String>,
    /// Instance fields as the dex lists them: (name, type descriptor).
    pub fields: Vec<(String, String)>,
    pub methods: Vec<MethodDef>,
}

/// Why a lookup failed: a Java exception the runtime would throw, or something the harness
/// does not model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LookupError {
    Throw(String),
    Unmodelled(String),
}

/// The dex's classes, as the harness's class linker knows them.
#[derive(Clone, Debug, Default)]
pub struct Classes {
    list: Vec<ClassDef>,
    index: HashMap<String, usize>,
}

impl Classes {
    /// Reads what `hubble-compile-method DEX --classes` wrote.
    pub fn parse(text: &str) -> Result<Classes, String> {
        let mut list: Vec<ClassDef> = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let n = n + 1;
            let (key, rest) = line.split_once(' ').unwrap_or((line, ""));
            let cur = list.last_mut();
            match (key, cur) {
                ("class", _) => {
                    let f: Vec<&str> = rest.split(' ').collect();
                    if f.len() != 3 {
                        return Err(format!("line {n}: bad class line '{line}'"));
                    }
                    list.push(ClassDef {
                        descriptor: f[0].to_string(),
                        superclass: (f[1] != "-").then(|| f[1].to_string()),
                        access: f[2]
                            .parse()
                            .map_err(|_| format!("line {n}: bad access flags '{}'", f[2]))?,
                        ..ClassDef::default()
                    });
                }
                ("implements", Some(c)) => c.interfaces.push(rest.to_string()),
                ("ifield", Some(c)) => {
                    let (name, ty) = rest
                        .split_once(' ')
                        .ok_or_else(|| format!("line {n}: bad field line '{line}'"))?;
                    c.fields.push((name.to_string(), ty.to_string()));
                }
                ("method", Some(c)) => {
                    let (access, desc) = rest
                        .split_once(' ')
                        .ok_or_else(|| format!("line {n}: bad method line '{line}'"))?;
                    c.methods.push(MethodDef {
                        access: access
                            .parse()
                            .map_err(|_| format!("line {n}: bad access flags '{access}'"))?,
                        descriptor: desc.to_string(),
                    });
                }
                (_, None) => return Err(format!("line {n}: '{key}' before any class")),
                (_, Some(_)) => return Err(format!("line {n}: unknown line '{line}'")),
            }
        }
        let index = list
            .iter()
            .enumerate()
            .map(|(k, c)| (c.descriptor.clone(), k))
            .collect();
        Ok(Classes { list, index })
    }

    /// Every class, in dex order.
    pub fn all(&self) -> impl Iterator<Item = &ClassDef> {
        self.list.iter()
    }

    pub fn get(&self, descriptor: &str) -> Option<&ClassDef> {
        self.index.get(descriptor).map(|&k| &self.list[k])
    }

    /// The class object's address (its `klass_` value in objects of the class).
    pub fn class_address(&self, descriptor: &str) -> Option<u64> {
        self.index
            .get(descriptor)
            .map(|&k| CLASS_BASE + CLASS_STRIDE * k as u64)
            .filter(|&a| a < BOOT_CLASSES)
    }

    /// The class whose class object is at `address`.
    pub fn class_at(&self, address: u64) -> Option<&ClassDef> {
        if address >= BOOT_CLASSES {
            return None;
        }
        let off = address.checked_sub(CLASS_BASE)?;
        if off % CLASS_STRIDE != 0 {
            return None;
        }
        self.list.get((off / CLASS_STRIDE) as usize)
    }

    /// `descriptor` and its superclasses the dex defines, the class first.
    fn chain<'a>(&'a self, descriptor: &str) -> impl Iterator<Item = &'a ClassDef> + 'a {
        let mut next = self.get(descriptor);
        std::iter::from_fn(move || {
            let c = next?;
            next = c.superclass.as_deref().and_then(|s| self.get(s));
            Some(c)
        })
    }

    /// Whether the chain of `descriptor` leaves the dex (a superclass the boot class path
    /// would define, java.lang.Object's aside): lookups there are not modelled.
    fn leaves_dex(&self, descriptor: &str) -> Option<String> {
        let last = self.chain(descriptor).last()?;
        match last.superclass.as_deref() {
            None | Some("Ljava/lang/Object;") => None,
            Some(s) => Some(s.to_string()),
        }
    }

    /// ClassLinker::ResolveMethod (class_linker-inl.h, ART 14) for the method a call names:
    /// `FindResolvedMethod` looks in the named class and its superclasses (`FindClassMethod`)
    /// or, for an interface, in it and its superinterfaces (`FindInterfaceMethod`); not found:
    /// NoSuchMethodError.
    pub fn resolve_method(&self, callee: &str) -> Result<(&ClassDef, &MethodDef), LookupError> {
        let class = class_of_descriptor(callee);
        let sig = name_sig(callee);
        let Some(def) = self.get(class) else {
            return Err(LookupError::Unmodelled(format!(
                "{callee}: {class} is not in the dex (the boot class path is not loaded)"
            )));
        };
        let found = if def.access & ACC_INTERFACE != 0 {
            self.find_interface_method(class, sig)
        } else {
            self.chain(class).find_map(|c| {
                c.methods
                    .iter()
                    .find(|m| m.name_sig() == sig)
                    .map(|m| (c, m))
            })
        };
        match found {
            Some(f) => Ok(f),
            None => match self.leaves_dex(class) {
                Some(outside) => Err(LookupError::Unmodelled(format!(
                    "{callee}: not in {class}'s classes in the dex, and its superclass {outside} \
                     is not loaded"
                ))),
                None => Err(LookupError::Throw("java.lang.NoSuchMethodError".into())),
            },
        }
    }

    fn find_interface_method(&self, iface: &str, sig: &str) -> Option<(&ClassDef, &MethodDef)> {
        let def = self.get(iface)?;
        if let Some(m) = def.methods.iter().find(|m| m.name_sig() == sig) {
            return Some((def, m));
        }
        def.interfaces
            .iter()
            .find_map(|i| self.find_interface_method(i, sig))
    }

    /// `klass->GetVTableEntry(resolved->GetMethodIndex())`: the vtable slot of a virtual
    /// method in `class` is the nearest class of its chain that declares a virtual method of
    /// the same name and signature (ClassLinker::LinkVirtualMethods: a subclass's method of
    /// the same name and signature takes its superclass's slot; every class of the corpus is
    /// in one package, so package-private overriding rules do not arise).
    pub fn vtable_entry(&self, class: &str, sig: &str) -> Option<(&ClassDef, &MethodDef)> {
        self.chain(class).find_map(|c| {
            c.methods
                .iter()
                .find(|m| m.is_virtual() && m.name_sig() == sig)
                .map(|m| (c, m))
        })
    }

    /// Class::FindVirtualMethodForInterface (mirror/class-inl.h): the receiver class's
    /// implementation of an interface method, from its iftable, which LinkInterfaceMethods
    /// fills with the virtual method of the same name and signature (or a default method).
    pub fn interface_target(&self, class: &str, sig: &str) -> Option<(&ClassDef, &MethodDef)> {
        if let Some(found) = self.vtable_entry(class, sig) {
            return Some(found);
        }
        // Default methods: the first non-abstract one the class's interfaces declare.
        self.chain(class)
            .flat_map(|c| c.interfaces.iter())
            .find_map(|i| {
                self.find_interface_method(i, sig)
                    .filter(|(_, m)| m.access & ACC_ABSTRACT == 0)
            })
    }

    /// The instance fields of an object of `class`: (declaring class, name, type), the
    /// superclasses' first; each has the slot of its index.
    pub fn layout(&self, class: &str) -> Vec<(String, String, String)> {
        let mut chain: Vec<&ClassDef> = self.chain(class).collect();
        chain.reverse();
        chain
            .iter()
            .flat_map(|c| {
                c.fields
                    .iter()
                    .map(|(n, t)| (c.descriptor.clone(), n.clone(), t.clone()))
            })
            .collect()
    }

    /// ClassLinker::ResolveFieldJLS (class_linker.cc:9957, ART 14): the field a reference
    /// names, looked up by name and type in the named class and then its superclasses
    /// (`mirror::Class::FindField`); its declaring class. Not found: NoSuchFieldError.
    pub fn resolve_field(
        &self,
        field_class: &str,
        name: &str,
        ty: &str,
    ) -> Result<&ClassDef, LookupError> {
        if self.get(field_class).is_none() {
            return Err(LookupError::Unmodelled(format!(
                "field {field_class}.{name}: {field_class} is not in the dex"
            )));
        }
        self.chain(field_class)
            .find(|c| c.fields.iter().any(|(n, t)| n == name && t == ty))
            .ok_or_else(|| LookupError::Throw("java.lang.NoSuchFieldError".into()))
    }

    /// The slot the field a reference names (`resolve_field`) has in an object of
    /// `object_class`; an object of a class without it: IncompatibleClassChangeError.
    pub fn field_slot(
        &self,
        object_class: &str,
        field_class: &str,
        name: &str,
        ty: &str,
    ) -> Result<usize, LookupError> {
        let owner = self.resolve_field(field_class, name, ty)?;
        self.layout(object_class)
            .iter()
            .position(|(c, n, t)| *c == owner.descriptor && n == name && t == ty)
            .ok_or_else(|| LookupError::Throw("java.lang.IncompatibleClassChangeError".into()))
    }
}

/// A new exception object of the boot class `name` (java.lang.ArithmeticException …), the
/// `k`-th of the call: what `Thread::ThrowNewException` allocates for an exception the runtime
/// throws. Its address is what a catch handler's move-exception then loads.
pub fn new_exception(u: &mut Unicorn<'_, ()>, name: &str, k: usize) -> Result<u64, String> {
    let class = BOOT_EXCEPTIONS
        .iter()
        .position(|e| *e == name)
        .ok_or_else(|| format!("the harness's runtime has no class for {name}"))?;
    let at = exception_address(k);
    if at + EXCEPTION_STRIDE > HEAP_BASE + HEAP_SIZE {
        return Err("too many exceptions in one call".into());
    }
    let klass = BOOT_CLASSES + CLASS_STRIDE * class as u64;
    u.mem_write(at, &(klass as u32).to_le_bytes())
        .and_then(|()| u.mem_write(at + 4, &[0u8; 12]))
        .map_err(|e| format!("{e:?}"))?;
    Ok(at)
}

/// Where `new_exception` puts the `k`-th exception of a call.
pub fn exception_address(k: usize) -> u64 {
    EXCEPTIONS_BASE + EXCEPTION_STRIDE * k as u64
}

/// The class name (`java.lang.ArithmeticException`) of the exception object at `obj`: a boot
/// exception the runtime created, or an object of a class of the dex.
pub fn exception_name(
    u: &Unicorn<'_, ()>,
    classes: Option<&Classes>,
    obj: u64,
) -> Result<String, String> {
    let mut b = [0u8; 4];
    u.mem_read(obj, &mut b)
        .map_err(|e| format!("the exception object at {obj:#x} is unreadable: {e:?}"))?;
    let klass = u64::from(u32::from_le_bytes(b));
    if let Some(off) = klass.checked_sub(BOOT_CLASSES) {
        if off % CLASS_STRIDE == 0 {
            if let Some(name) = BOOT_EXCEPTIONS.get((off / CLASS_STRIDE) as usize) {
                return Ok((*name).to_string());
            }
        }
    }
    classes
        .and_then(|c| c.class_at(klass))
        .map(|c| {
            c.descriptor
                .trim_start_matches('L')
                .trim_end_matches(';')
                .replace('/', ".")
        })
        .ok_or_else(|| format!("the object at {obj:#x} (class word {klass:#x}) is no exception"))
}

/// An object the harness lays out before a call: its class and the values of the fields named
/// (the rest are zero, as a new object's are), as canonical bits (`crate::canonical`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectSpec {
    pub class: String,
    pub fields: Vec<(String, u64)>,
}

/// The address of the `k`-th object laid out by `write_objects`.
pub fn object_address(k: usize) -> u64 {
    HEAP_BASE + OBJECT_STRIDE * k as u64
}

/// The address of slot `k` of the object at `obj`.
pub fn slot_address(obj: u64, k: usize) -> u64 {
    obj + HEADER + 8 * k as u64
}

/// How a field of type `ty` (its descriptor's first character) reads back as canonical bits:
/// a primitive as `crate::canonical` gives a value of that type, a reference as its 32 bits.
pub fn canonical_field(ty: u8, raw: u64) -> u64 {
    match ty {
        b'L' | b'[' => raw & 0xffff_ffff,
        _ => crate::canonical(ty, raw),
    }
}

/// The first character of a type descriptor (`I`, `J`, `LFoo;` → `L`).
pub fn type_char(descriptor: &str) -> u8 {
    descriptor.as_bytes().first().copied().unwrap_or(b'V')
}

/// The low `width` bits of `raw`: what a field entrypoint of that width reads or writes.
pub fn field_bits(width: u32, raw: u64) -> u64 {
    if width >= 64 {
        raw
    } else {
        raw & ((1u64 << width) - 1)
    }
}

/// The heap's bytes from `HEAP_BASE` with `objects` laid out at `object_address(0..)`: each
/// object's class reference, a zero monitor and its fields.
pub fn image(classes: &Classes, objects: &[ObjectSpec]) -> Result<Vec<u8>, String> {
    let len = OBJECT_STRIDE as usize * objects.len();
    if len as u64 > HEAP_SIZE / 2 {
        return Err("too many objects for the heap".into());
    }
    let mut bytes = vec![0u8; len];
    for (k, o) in objects.iter().enumerate() {
        let class = classes
            .class_address(&o.class)
            .ok_or_else(|| format!("object {k}: no class {} in the dex", o.class))?;
        let layout = classes.layout(&o.class);
        if HEADER + 8 * layout.len() as u64 > OBJECT_STRIDE {
            return Err(format!("object {k}: {} has too many fields", o.class));
        }
        let at = (object_address(k) - HEAP_BASE) as usize;
        bytes[at..at + 4].copy_from_slice(&(class as u32).to_le_bytes());
        for (name, bits) in &o.fields {
            let slot = layout
                .iter()
                .position(|(_, n, _)| n == name)
                .ok_or_else(|| format!("object {k}: {} has no field {name}", o.class))?;
            let s = (slot_address(object_address(k), slot) - HEAP_BASE) as usize;
            bytes[s..s + 8].copy_from_slice(&bits.to_le_bytes());
        }
    }
    Ok(bytes)
}

/// The fields of `objects` in a heap image after a call: per object, (name, canonical bits)
/// in layout order.
pub fn read_image(
    classes: &Classes,
    objects: &[ObjectSpec],
    bytes: &[u8],
) -> Result<Vec<Vec<(String, u64)>>, String> {
    let mut out = Vec::new();
    for (k, o) in objects.iter().enumerate() {
        let mut fields = Vec::new();
        for (slot, (_, name, ty)) in classes.layout(&o.class).iter().enumerate() {
            let s = (slot_address(object_address(k), slot) - HEAP_BASE) as usize;
            let raw = bytes
                .get(s..s + 8)
                .ok_or("the heap image is shorter than its objects")?;
            fields.push((
                name.clone(),
                canonical_field(type_char(ty), u64::from_le_bytes(raw.try_into().unwrap())),
            ));
        }
        out.push(fields);
    }
    Ok(out)
}

/// Lays out `objects` in the emulator's heap (`image`, every byte of their slots). The rest of
/// the heap is left as it is: no code of this call holds a reference into it (an exception
/// object is written whole when the runtime makes one, `new_exception`).
pub fn write_objects(
    u: &mut Unicorn<'_, ()>,
    classes: &Classes,
    objects: &[ObjectSpec],
) -> Result<(), String> {
    let bytes = image(classes, objects)?;
    u.mem_write(HEAP_BASE, &bytes)
        .map_err(|e| format!("writing the heap: {e:?}"))
}

/// The fields of the objects `write_objects` laid out, after a call (`read_image`).
pub fn read_objects(
    u: &Unicorn<'_, ()>,
    classes: &Classes,
    objects: &[ObjectSpec],
) -> Result<Vec<Vec<(String, u64)>>, String> {
    let len = OBJECT_STRIDE as usize * objects.len();
    let bytes = u
        .mem_read_as_vec(HEAP_BASE, len)
        .map_err(|e| format!("reading the heap: {e:?}"))?;
    read_image(classes, objects, &bytes)
}

/// The class of the object at `obj` (its `klass_` word), or why not.
pub fn class_of<'c>(
    u: &Unicorn<'_, ()>,
    classes: &'c Classes,
    obj: u64,
) -> Result<&'c ClassDef, String> {
    let mut b = [0u8; 4];
    u.mem_read(obj, &mut b)
        .map_err(|e| format!("the object at {obj:#x} is unreadable: {e:?}"))?;
    let klass = u64::from(u32::from_le_bytes(b));
    classes
        .class_at(klass)
        .ok_or_else(|| format!("the object at {obj:#x} has class word {klass:#x}, no class"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEX: &str = "\
class LAnimal; - 1
ifield legs I
ifield weight D
method 1 LAnimal;->sound()I
method 65537 LAnimal;-><init>()V
method 2 LAnimal;->secret()I
class LBird; LAnimal; 1
implements LFlyer;
ifield wings B
method 1 LBird;->sound()I
method 1 LBird;->fly(I)I
class LFlyer; - 1537
method 1025 LFlyer;->fly(I)I
method 1 LFlyer;->glide()I
class LPenguin; LBird; 1
";

    #[test]
    fn lookups_follow_the_class_linker() {
        let c = Classes::parse(DEX).unwrap();
        // Resolution searches superclasses; the vtable takes the nearest override.
        let (owner, m) = c.resolve_method("LPenguin;->sound()I").unwrap();
        assert_eq!(
            (owner.descriptor.as_str(), m.descriptor.as_str()),
            ("LBird;", "LBird;->sound()I")
        );
        assert_eq!(
            c.vtable_entry("LPenguin;", "sound()I")
                .unwrap()
                .1
                .descriptor,
            "LBird;->sound()I"
        );
        assert_eq!(
            c.vtable_entry("LAnimal;", "sound()I").unwrap().1.descriptor,
            "LAnimal;->sound()I"
        );
        // Private methods and constructors have no vtable slot.
        assert!(c.vtable_entry("LBird;", "secret()I").is_none());
        assert!(c.vtable_entry("LBird;", "<init>()V").is_none());
        // Interface calls: the class's method, else a default method.
        assert_eq!(
            c.interface_target("LPenguin;", "fly(I)I")
                .unwrap()
                .1
                .descriptor,
            "LBird;->fly(I)I"
        );
        assert_eq!(
            c.interface_target("LBird;", "glide()I")
                .unwrap()
                .1
                .descriptor,
            "LFlyer;->glide()I"
        );
        assert_eq!(
            c.resolve_method("LBird;->nothing()V"),
            Err(LookupError::Throw("java.lang.NoSuchMethodError".into()))
        );
        assert!(matches!(
            c.resolve_method("Ljava/lang/Object;-><init>()V"),
            Err(LookupError::Unmodelled(_))
        ));
    }

    #[test]
    fn fields_have_their_superclass_slots_first() {
        let c = Classes::parse(DEX).unwrap();
        let names: Vec<String> = c.layout("LPenguin;").into_iter().map(|f| f.1).collect();
        assert_eq!(names, ["legs", "weight", "wings"]);
        assert_eq!(c.field_slot("LPenguin;", "LBird;", "legs", "I"), Ok(0));
        assert_eq!(c.field_slot("LPenguin;", "LBird;", "wings", "B"), Ok(2));
        assert_eq!(
            c.field_slot("LAnimal;", "LBird;", "wings", "B"),
            Err(LookupError::Throw(
                "java.lang.IncompatibleClassChangeError".into()
            ))
        );
        assert_eq!(
            c.field_slot("LBird;", "LBird;", "legs", "J"),
            Err(LookupError::Throw("java.lang.NoSuchFieldError".into()))
        );
        assert_eq!(canonical_field(b'B', 0x1ff), u64::MAX);
        assert_eq!(canonical_field(b'C', 0x1ffff), 0xffff);
        assert_eq!(canonical_field(type_char("LFoo;"), u64::MAX), 0xffff_ffff);
        assert_eq!(field_bits(16, 0x1_2345), 0x2345);
        assert_eq!(field_bits(64, u64::MAX), u64::MAX);
    }

    #[test]
    fn exceptions_are_objects_of_their_class() {
        let mut u = Unicorn::new(
            unicorn_engine::unicorn_const::Arch::ARM64,
            unicorn_engine::unicorn_const::Mode::ARM,
        )
        .unwrap();
        u.mem_map(
            HEAP_BASE,
            HEAP_SIZE,
            unicorn_engine::unicorn_const::Prot::ALL,
        )
        .unwrap();
        let c = Classes::parse(DEX).unwrap();
        let a = new_exception(&mut u, "java.lang.NullPointerException", 0).unwrap();
        let b = new_exception(&mut u, "java.lang.ArithmeticException", 1).unwrap();
        assert_ne!(a, b);
        assert_eq!(
            exception_name(&u, Some(&c), a).unwrap(),
            "java.lang.NullPointerException"
        );
        assert_eq!(
            exception_name(&u, None, b).unwrap(),
            "java.lang.ArithmeticException"
        );
        // An object of a dex class names that class; a word that is no class is an error.
        u.mem_write(
            HEAP_BASE,
            &(c.class_address("LBird;").unwrap() as u32).to_le_bytes(),
        )
        .unwrap();
        assert_eq!(exception_name(&u, Some(&c), HEAP_BASE).unwrap(), "Bird");
        u.mem_write(HEAP_BASE, &7u32.to_le_bytes()).unwrap();
        assert!(exception_name(&u, Some(&c), HEAP_BASE).is_err());
        assert!(new_exception(&mut u, "java.lang.Nope", 2).is_err());
    }

    #[test]
    fn bad_listings_are_errors() {
        assert!(Classes::parse("ifield x I\n").is_err());
        assert!(Classes::parse("class LA;\n").is_err());
        assert!(Classes::parse("class LA; - 1\nbogus\n").is_err());
    }
}
