//! ProGuard's own format (no R8 metadata): the shape of the mapping Debian's ProGuard 6.2.2
//! writes for proving/deobf's program (overloads renamed to one name, `-overloadaggressively`
//! names that differ only in their return type, a kept class whose signatures name obfuscated
//! types, nested classes, arrays), and every way a name can fail to resolve.

use std::collections::BTreeMap;

use hubble_deobf::{Kind, Mapping};

const MAPPING: &str = "\
com.example.shop.Cart -> com.example.shop.a:
    java.util.List lines -> a
    void <init>() -> <init>
    void add(com.example.shop.model.Item) -> a
    void add(com.example.shop.model.Item,int) -> a
    void add(java.lang.String,long) -> a
    void add(com.example.shop.model.Item[]) -> a
    long total() -> a
    long total(boolean) -> a
    int count() -> a
    com.example.shop.model.Item first() -> a
    java.util.List lines() -> a
com.example.shop.Inventory -> com.example.shop.c:
    com.example.shop.model.Item[] slots -> a
    void <init>(int) -> <init>
    com.example.shop.model.Item[][] grid() -> b
com.example.shop.Inventory$Slot -> com.example.shop.d:
    com.example.shop.Inventory$Slot of(int) -> a
    int index() -> a
com.example.shop.api.Checkout -> com.example.shop.api.Checkout:
    void register(com.example.shop.Cart) -> register
    long pay(com.example.shop.Cart) -> pay
com.example.shop.model.Item -> com.example.shop.a.a:
    java.lang.String name() -> a
    long price() -> a
";

fn mapping() -> Mapping {
    Mapping::parse("mapping.txt", MAPPING).unwrap()
}

fn check(m: &Mapping, obfuscated: &str, want: &str, kind: Kind) {
    let r = m.deobfuscate(obfuscated).unwrap();
    assert_eq!((r.name.as_str(), r.kind), (want, kind), "{obfuscated}");
}

#[test]
fn overloads_renamed_to_one_name_are_told_apart_by_their_types() {
    let m = mapping();
    let d = Kind::Deobfuscated;
    check(
        &m,
        "void com.example.shop.a.a(com.example.shop.a.a)",
        "void com.example.shop.Cart.add(com.example.shop.model.Item)",
        d,
    );
    check(
        &m,
        "void com.example.shop.a.a(com.example.shop.a.a, int)",
        "void com.example.shop.Cart.add(com.example.shop.model.Item, int)",
        d,
    );
    check(
        &m,
        "void com.example.shop.a.a(java.lang.String, long)",
        "void com.example.shop.Cart.add(java.lang.String, long)",
        d,
    );
    check(
        &m,
        "void com.example.shop.a.a(com.example.shop.a.a[])",
        "void com.example.shop.Cart.add(com.example.shop.model.Item[])",
        d,
    );
    check(
        &m,
        "long com.example.shop.a.a(boolean)",
        "long com.example.shop.Cart.total(boolean)",
        d,
    );
}

#[test]
fn aggressive_overloads_are_told_apart_by_their_return_type() {
    let m = mapping();
    let d = Kind::Deobfuscated;
    check(
        &m,
        "long com.example.shop.a.a()",
        "long com.example.shop.Cart.total()",
        d,
    );
    check(
        &m,
        "int com.example.shop.a.a()",
        "int com.example.shop.Cart.count()",
        d,
    );
    check(
        &m,
        "com.example.shop.a.a com.example.shop.a.a()",
        "com.example.shop.model.Item com.example.shop.Cart.first()",
        d,
    );
    check(
        &m,
        "java.util.List com.example.shop.a.a()",
        "java.util.List com.example.shop.Cart.lines()",
        d,
    );
}

#[test]
fn kept_classes_nested_classes_arrays_and_constructors() {
    let m = mapping();
    let d = Kind::Deobfuscated;
    // Kept by name, with an obfuscated parameter type.
    check(
        &m,
        "void com.example.shop.api.Checkout.register(com.example.shop.a)",
        "void com.example.shop.api.Checkout.register(com.example.shop.Cart)",
        d,
    );
    check(
        &m,
        "com.example.shop.a.a[][] com.example.shop.c.b()",
        "com.example.shop.model.Item[][] com.example.shop.Inventory.grid()",
        d,
    );
    check(
        &m,
        "com.example.shop.d com.example.shop.d.a(int)",
        "com.example.shop.Inventory$Slot com.example.shop.Inventory$Slot.of(int)",
        d,
    );
    check(
        &m,
        "int com.example.shop.d.a()",
        "int com.example.shop.Inventory$Slot.index()",
        d,
    );
    check(
        &m,
        "void com.example.shop.c.<init>(int)",
        "void com.example.shop.Inventory.<init>(int)",
        d,
    );
    // A static initializer the mapping does not list keeps its name, class mapped.
    check(
        &m,
        "void com.example.shop.c.<clinit>()",
        "void com.example.shop.Inventory.<clinit>()",
        d,
    );
}

#[test]
fn framework_names_stay_but_their_app_types_are_mapped() {
    let m = mapping();
    check(
        &m,
        "void android.view.View.setOnClickListener(android.view.View$OnClickListener)",
        "void android.view.View.setOnClickListener(android.view.View$OnClickListener)",
        Kind::NotInMapping,
    );
    check(
        &m,
        "boolean java.util.ArrayList.add(java.lang.Object)",
        "boolean java.util.ArrayList.add(java.lang.Object)",
        Kind::NotInMapping,
    );
    for not_java in ["0x7000beef", "<runtime internal method>"] {
        check(&m, not_java, not_java, Kind::NotAMethod);
    }
}

#[test]
fn names_that_do_not_resolve_are_kept_and_say_why() {
    let m = mapping();
    // A class that looks obfuscated but is not in the mapping: untouched, even its types.
    check(
        &m,
        "void zz.q.a(com.example.shop.a)",
        "void zz.q.a(com.example.shop.a)",
        Kind::ClassUnknown,
    );
    // A method name the class does not have: class and types mapped, name kept.
    check(
        &m,
        "void com.example.shop.a.z(com.example.shop.a.a)",
        "void com.example.shop.Cart.z(com.example.shop.model.Item)",
        Kind::MemberUnknown,
    );
    // A name the class has, with a signature no candidate has: never a guess.
    check(
        &m,
        "void com.example.shop.a.a(int, int)",
        "void com.example.shop.Cart.a(int, int)",
        Kind::SignatureMismatch,
    );
}

#[test]
fn aliased_names_are_deobfuscated_part_by_part() {
    let m = mapping();
    let r = m
        .deobfuscate("int com.example.shop.a.a() | void zz.q.a()")
        .unwrap();
    assert_eq!(r.name, "int com.example.shop.Cart.count() | void zz.q.a()");
    assert_eq!(r.kind, Kind::ClassUnknown, "the worst part counts");
}

#[test]
fn names_printed_without_a_signature_match_by_name() {
    let m = mapping();
    check(
        &m,
        "com.example.shop.c.b",
        "com.example.shop.Inventory.grid",
        Kind::Deobfuscated,
    );
    let r = m.deobfuscate("com.example.shop.d.a").unwrap();
    assert_eq!(
        (r.name.as_str(), r.kind),
        (
            "com.example.shop.Inventory$Slot.of | com.example.shop.Inventory$Slot.index",
            Kind::Ambiguous
        )
    );
}

#[test]
fn a_symbol_table_is_rewritten_in_place_with_a_report() {
    let m = mapping();
    let mut symbols = BTreeMap::from([
        (0x10, "int com.example.shop.a.a()".to_owned()),
        (0x20, "void android.os.Looper.loop()".to_owned()),
        (0x30, "void zz.q.a()".to_owned()),
        (0x40, "void com.example.shop.a.a(int, int)".to_owned()),
    ]);
    let report = m.deobfuscate_symbols(&mut symbols).unwrap();
    assert_eq!(symbols[&0x10], "int com.example.shop.Cart.count()");
    assert_eq!(symbols[&0x20], "void android.os.Looper.loop()");
    assert_eq!(report.names(), 4);
    assert_eq!(report.count(Kind::Deobfuscated), 1);
    assert_eq!(report.class_found(), 2);
    assert_eq!(report.warnings(), 2);
    assert_eq!(report.example(Kind::ClassUnknown), Some("void zz.q.a()"));
    assert_eq!(
        m.class("com.example.shop.a.a"),
        Some("com.example.shop.model.Item")
    );
    assert_eq!(m.classes(), 5);
    let info = m.info();
    assert_eq!((info.classes, info.method_lines, info.fields), (5, 18, 2));
    assert_eq!(info.version, None);
}

#[test]
fn windows_line_ends_and_a_byte_order_mark_are_accepted() {
    let text = format!("\u{feff}{}", MAPPING.replace('\n', "\r\n"));
    let m = Mapping::parse("crlf.txt", &text).unwrap();
    check(
        &m,
        "int com.example.shop.a.a()",
        "int com.example.shop.Cart.count()",
        Kind::Deobfuscated,
    );
}
