#!/bin/sh
# Mutants of the trace-point emitters (compiler/optimizing/hubble_trace_point_*.cc; arm64 unless
# the name says otherwise), for the compiler harness's own test that its checks can fail (tests/mutants.rs): built by
# scripts/art-build --compiler into hubble-compile-method-mutant-KIND.
#   mutate.sh clobber IN OUT   every trace point first writes x2, a register it does not own
#   mutate.sh noexit  IN OUT   an exit trace point always branches past its store
#   mutate.sh clobber-t32 IN OUT  (hubble_trace_point_arm_vixl.cc) every trace point first writes the
#                              lowest of r1-r3, r5-r7 that is not one of its temps
#   mutate.sh noexit-x86_64 IN OUT  (hubble_trace_point_x86_64.cc) an exit trace point always jumps
#                              past its store
#   mutate.sh noexit-x86 IN OUT  (hubble_trace_point_x86.cc) an exit trace point always jumps past its
#                              store
#   mutate.sh clobber-x86 IN OUT  (hubble_trace_point_x86.cc) every trace point first writes the first
#                              of ESI, EDI, EBX, ECX that is not its cursor (EAX, EDX: its temps)
set -eu
kind="$1" in="$2" out="$3"
case "$kind" in
  clobber)
    sed '/^void EmitTracePointArm64(/,/^}/ s|^  const Register scratch = tp.scratch.X();$|&\n  masm->Mov(vixl::aarch64::x2, 0x5a5a);  // HUBBLE MUTANT: clobbers x2|' "$in" > "$out.tmp" ;;
  noexit)
    sed '/^void EmitTracePointArm64(/,/^}/ s|^    masm->cbz(cursor, &labels->done);$|    if (kind == TraceKind::kExit) { masm->b(\&labels->done); } else { masm->cbz(cursor, \&labels->done); }  // HUBBLE MUTANT: drops exits|' "$in" > "$out.tmp" ;;
  clobber-t32)
    sed '/^void EmitTracePointArmVIXL(/,/^}/ s|^  VIXL_ASSERT(tp.offsets.limit == tp.offsets.cursor + 4);$|&\n  for (vixl::aarch32::Register r : {vixl::aarch32::r1, vixl::aarch32::r2, vixl::aarch32::r3, vixl::aarch32::r5, vixl::aarch32::r6, vixl::aarch32::r7}) { if (!r.Is(tp.cursor) \&\& !r.Is(tp.lo) \&\& !r.Is(tp.hi)) { masm->Mov(r, 0x5a5a); break; } }  // HUBBLE MUTANT: clobbers a register it does not own|' "$in" > "$out.tmp" ;;
  noexit-x86_64)
    sed '/^void EmitTracePointX86_64(/,/^}/ s|^  assembler->j(x86_64::kEqual, \&off);$|  if (kind == TraceKind::kExit) { assembler->jmp(\&off); } else { assembler->j(x86_64::kEqual, \&off); }  // HUBBLE MUTANT: drops exits|' "$in" > "$out.tmp" ;;
  noexit-x86)
    sed '/^void EmitTracePointX86(/,/^}/ s|^  assembler->j(x86::kEqual, \&off);$|  if (kind == TraceKind::kExit) { assembler->jmp(\&off); } else { assembler->j(x86::kEqual, \&off); }  // HUBBLE MUTANT: drops exits|' "$in" > "$out.tmp" ;;
  clobber-x86)
    sed '/^void EmitTracePointX86(/,/^}/ s|^  NearLabel off;$|&\n  for (Register r : {x86::ESI, x86::EDI, x86::EBX, x86::ECX}) { if (r != tp.cursor) { assembler->movl(r, Immediate(0x5a5a)); break; } }  // HUBBLE MUTANT: clobbers a register it does not own|' "$in" > "$out.tmp" ;;
  *) echo "mutate.sh: unknown mutant '$kind'" >&2; exit 2 ;;
esac
# A mutant that did not apply would test nothing: refuse it.
[ "$(grep -c 'HUBBLE MUTANT' "$out.tmp")" -eq 1 ] || { echo "mutate.sh: $kind did not apply to $in" >&2; rm -f "$out.tmp"; exit 1; }
mv "$out.tmp" "$out"
