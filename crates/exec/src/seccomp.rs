//! The seccomp programs every zygote (and so every task) runs under, generated with
//! `seccompiler` from the rules below and handed to the harness, which installs them on
//! itself before its first task (`harness/hardening.py` `harden_process`).
//!
//! - No new namespaces (a task could otherwise mount a tmpfs of any size in a user and mount
//!   namespace of its own), no `setns`, no `memfd_create` (memory RLIMIT_AS does not count):
//!   refused with EPERM, as a kernel without them would.
//! - `clone3`: ENOSYS, so glibc falls back to `clone`, whose flags the filter can see.
//! - Reaching into another process (ptrace, process_vm_readv/writev, pidfd_getfd, kcmp):
//!   the process is killed with SIGSYS, which the harness reports as tampering.
//! - Other calls no task needs (modules, mounts, kexec, keys, BPF, swap, reboot): EPERM.

use std::collections::BTreeMap;

use anyhow::{anyhow, Result};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// The namespace flags of `clone`: any of them set means a new namespace.
const CLONE_NEW: [u64; 7] = [
    libc::CLONE_NEWNS as u64,
    libc::CLONE_NEWCGROUP as u64,
    libc::CLONE_NEWUTS as u64,
    libc::CLONE_NEWIPC as u64,
    libc::CLONE_NEWUSER as u64,
    libc::CLONE_NEWPID as u64,
    libc::CLONE_NEWNET as u64,
];

/// The programs for this machine, each as the bytes of its `struct sock_filter` array, or
/// why there are none (an architecture seccompiler does not know).
pub(crate) fn programs() -> Result<Vec<Vec<u8>>> {
    let arch: TargetArch = std::env::consts::ARCH
        .try_into()
        .map_err(|_| anyhow!("no seccomp filter for {}", std::env::consts::ARCH))?;
    let mut out = Vec::new();
    if arch == TargetArch::x86_64 {
        out.push(to_bytes(&no_x32()));
    }
    let every = |nrs: &[i64]| -> BTreeMap<i64, Vec<SeccompRule>> {
        nrs.iter().map(|n| (*n, Vec::new())).collect()
    };
    // New namespaces and memory RLIMIT_AS does not count.
    let mut refused = every(&[libc::SYS_unshare, libc::SYS_setns, libc::SYS_memfd_create]);
    let clone_rules = CLONE_NEW
        .iter()
        .map(|flag| {
            SeccompRule::new(vec![SeccompCondition::new(
                0,
                SeccompCmpArgLen::Qword,
                SeccompCmpOp::MaskedEq(*flag),
                *flag,
            )?])
        })
        .collect::<std::result::Result<Vec<_>, _>>()?;
    refused.insert(libc::SYS_clone, clone_rules);
    // Calls no task needs: refused quietly.
    for nr in [
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_kexec_load,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_keyctl,
        libc::SYS_bpf,
        libc::SYS_userfaultfd,
        libc::SYS_swapon,
        libc::SYS_swapoff,
        libc::SYS_reboot,
        libc::SYS_open_by_handle_at,
        libc::SYS_perf_event_open,
    ] {
        refused.insert(nr, Vec::new());
    }
    out.push(compile(
        refused,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )?);
    out.push(compile(
        every(&[libc::SYS_clone3]),
        SeccompAction::Errno(libc::ENOSYS as u32),
        arch,
    )?);
    // Reaching into another process: the zygote, another task. Never legitimate here.
    out.push(compile(
        every(&[
            libc::SYS_ptrace,
            libc::SYS_process_vm_readv,
            libc::SYS_process_vm_writev,
            libc::SYS_pidfd_getfd,
            libc::SYS_kcmp,
        ]),
        SeccompAction::KillProcess,
        arch,
    )?);
    Ok(out)
}

/// The programs as the harness takes them on its command line: hex, comma-separated.
pub(crate) fn programs_arg() -> (String, Option<String>) {
    match programs() {
        Ok(progs) => (
            progs
                .iter()
                .map(|p| pivot_base::digest::hex(p))
                .collect::<Vec<_>>()
                .join(","),
            None,
        ),
        Err(e) => (String::new(), Some(format!("{e:#}"))),
    }
}

fn compile(
    rules: BTreeMap<i64, Vec<SeccompRule>>,
    on_match: SeccompAction,
    arch: TargetArch,
) -> Result<Vec<u8>> {
    let filter = SeccompFilter::new(rules, SeccompAction::Allow, on_match, arch)?;
    let prog: BpfProgram = filter.try_into()?;
    Ok(to_bytes(&prog))
}

/// x86_64's x32 ABI (system call numbers with bit 30 set) would reach the calls above under
/// other numbers; seccompiler's architecture check cannot tell it apart (both are
/// AUDIT_ARCH_X86_64), so this four-instruction program refuses it.
fn no_x32() -> BpfProgram {
    use seccompiler::sock_filter;
    const LD_W_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
    const JGE_K: u16 = 0x35; // BPF_JMP | BPF_JGE | BPF_K
    const RET_K: u16 = 0x06; // BPF_RET | BPF_K
    let op = |code, jt, jf, k| sock_filter { code, jt, jf, k };
    vec![
        op(LD_W_ABS, 0, 0, 0), // seccomp_data.nr
        op(JGE_K, 0, 1, 0x4000_0000),
        op(RET_K, 0, 0, libc::SECCOMP_RET_ERRNO | libc::EPERM as u32),
        op(RET_K, 0, 0, libc::SECCOMP_RET_ALLOW),
    ]
}

fn to_bytes(prog: &[seccompiler::sock_filter]) -> Vec<u8> {
    let mut out = Vec::with_capacity(prog.len() * 8);
    for i in prog {
        out.extend_from_slice(&i.code.to_ne_bytes());
        out.push(i.jt);
        out.push(i.jf);
        out.extend_from_slice(&i.k.to_ne_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_are_whole_instructions_with_an_arch_check() {
        let progs = programs().expect("a known architecture");
        assert!(progs.len() >= 3);
        for p in &progs {
            assert_eq!(p.len() % 8, 0);
            assert!(p.len() / 8 <= 4096, "a program over the kernel's limit");
        }
        let (arg, why) = programs_arg();
        assert!(why.is_none());
        assert_eq!(arg.split(',').count(), progs.len());
    }
}
