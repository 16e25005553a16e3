//! Folded stacks (`a;b;c <self ns>`, Brendan Gregg's format) and flame-graph SVG (inferno).
//!
//! Each step attributes the ticks since the previous step of the same thread to the stack that
//! was current (self time); time with no frame open is not attributed. A path's ticks are added
//! up over the thread and converted to ns once, so its value is the self time of its frames as
//! `hubble top` and `chains` compute it (⌊ticks · 10⁹ / hz⌋), not a sum of per-step roundings.
//! With more than one thread, every stack is rooted at its thread (`<thread name> (tid N)`); a
//! thread is an input, or with the `_threads` variants the inputs given one thread number (the
//! runs of a version 4 file's thread), whose stacks add up under the one root.
//! Stacks are kept in a prefix tree, so memory is one node per distinct call path, never per
//! event.

use std::collections::HashMap;
use std::io::Write;

use crate::{ExportError, Result};
use hubble_format::names;
use hubble_format::stream::Input;
use hubble_format::stream::{prepare, Step};

struct Trie {
    /// (parent, name) → node.
    children: HashMap<(u32, u32), u32>,
    /// Per node: parent, name, self time in ns.
    nodes: Vec<(u32, u32, u64)>,
    /// Per node: self ticks of the current input, not yet converted.
    ticks: Vec<u64>,
    /// The nodes with ticks in the current input.
    touched: Vec<u32>,
    names: Vec<String>,
    name_ids: HashMap<String, u32>,
}

impl Trie {
    fn name(&mut self, name: &str) -> u32 {
        if let Some(id) = self.name_ids.get(name) {
            return *id;
        }
        let id = self.names.len() as u32;
        let clean = name.replace([';', '\n'], ":");
        self.names.push(clean);
        self.name_ids.insert(name.to_owned(), id);
        id
    }
    fn child(&mut self, parent: u32, name: u32) -> u32 {
        let next = self.nodes.len() as u32;
        let id = *self.children.entry((parent, name)).or_insert(next);
        if id == next {
            self.nodes.push((parent, name, 0));
            self.ticks.push(0);
        }
        id
    }
    fn charge(&mut self, node: u32, ticks: u64) {
        if ticks == 0 {
            return;
        }
        // A node is settled once per input: listed when its first ticks arrive.
        let t = &mut self.ticks[node as usize];
        if *t == 0 {
            self.touched.push(node);
        }
        *t += ticks;
    }
    /// Converts the current input's ticks to ns, once per node.
    fn settle(&mut self, clock: &hubble_format::clock::WallClock) {
        for node in self.touched.drain(..) {
            let ticks = std::mem::take(&mut self.ticks[node as usize]);
            self.nodes[node as usize].2 += clock.ticks_to_ns(ticks) as u64;
        }
    }
}

/// The folded stacks of `inputs`, sorted, one `frames value` string each (value: self ns).
pub fn folded_lines(inputs: &[Input<'_>]) -> Result<Vec<String>> {
    folded_lines_threads(inputs, &crate::one_thread_per_input(inputs.len()))
}

/// [`folded_lines`] with input `i` in thread `threads[i]`.
pub fn folded_lines_threads(inputs: &[Input<'_>], threads: &[usize]) -> Result<Vec<String>> {
    crate::check_threads(inputs, threads)?;
    let several = threads.iter().any(|t| *t != threads[0]);
    let prepared = prepare(inputs)?;
    // Node 0 is the root (no frame).
    let mut trie = Trie {
        children: HashMap::new(),
        nodes: vec![(0, u32::MAX, 0)],
        ticks: vec![0],
        touched: Vec::new(),
        names: Vec::new(),
        name_ids: HashMap::new(),
    };
    for p in &prepared {
        let input = p.input;
        let base = if several {
            let h = &input.file.header;
            let n = trie.name(&format!("{} (tid {})", h.thread_name, h.tid));
            trie.child(0, n)
        } else {
            0
        };
        let mut method_names: HashMap<Option<u64>, u32> = HashMap::new();
        let mut stack: Vec<u32> = vec![base];
        let mut previous: Option<u64> = None;
        for (counter, step) in p.steps() {
            if let Some(prev) = previous {
                let top = *stack.last().expect("base");
                if top != base {
                    trie.charge(top, counter - prev);
                }
            }
            previous = Some(counter);
            match step {
                Step::Enter(method) => {
                    let name = match method_names.get(&method) {
                        Some(n) => *n,
                        None => {
                            let n = trie.name(&names::display(&input.file.symbols, method));
                            method_names.insert(method, n);
                            n
                        }
                    };
                    let parent = *stack.last().expect("base");
                    let node = trie.child(parent, name);
                    stack.push(node);
                }
                // Steps are balanced; the base (the thread's root) stays whatever comes.
                Step::Exit => stack.truncate((stack.len() - 1).max(1)),
            }
        }
        trie.settle(&p.clock);
    }
    let mut lines = Vec::new();
    for (index, &(_, _, value)) in trie.nodes.iter().enumerate().skip(1) {
        if value == 0 {
            continue;
        }
        let mut path = Vec::new();
        let mut node = index as u32;
        while node != 0 {
            let (parent, name, _) = trie.nodes[node as usize];
            path.push(trie.names[name as usize].as_str());
            node = parent;
        }
        path.reverse();
        lines.push(format!("{} {value}", path.join(";")));
    }
    lines.sort();
    Ok(lines)
}

/// Writes folded stacks.
pub fn write_folded(inputs: &[Input<'_>], sink: &mut dyn Write) -> Result<()> {
    write_folded_threads(inputs, &crate::one_thread_per_input(inputs.len()), sink)
}

/// [`write_folded`] with input `i` in thread `threads[i]`.
pub fn write_folded_threads(
    inputs: &[Input<'_>],
    threads: &[usize],
    sink: &mut dyn Write,
) -> Result<()> {
    for line in folded_lines_threads(inputs, threads)? {
        writeln!(sink, "{line}")?;
    }
    sink.flush()?;
    Ok(())
}

/// Writes an inferno flame graph (SVG) of self time.
pub fn write_svg(inputs: &[Input<'_>], title: &str, sink: &mut dyn Write) -> Result<()> {
    write_svg_threads(
        inputs,
        &crate::one_thread_per_input(inputs.len()),
        title,
        sink,
    )
}

/// [`write_svg`] with input `i` in thread `threads[i]`.
pub fn write_svg_threads(
    inputs: &[Input<'_>],
    threads: &[usize],
    title: &str,
    sink: &mut dyn Write,
) -> Result<()> {
    let lines = folded_lines_threads(inputs, threads)?;
    let mut options = inferno::flamegraph::Options::default();
    options.title = title.to_owned();
    options.count_name = "ns".to_owned();
    options.hash = true;
    if lines.is_empty() {
        return Err(ExportError::Unsupported(
            "no frame has any duration: nothing to draw".into(),
        ));
    }
    inferno::flamegraph::from_lines(&mut options, lines.iter().map(String::as_str), &mut *sink)
        .map_err(|e| ExportError::Unsupported(format!("flame graph: {e}")))?;
    sink.flush()?;
    Ok(())
}
