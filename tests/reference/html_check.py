"""Reference check for `skillwatch report --html` (tests/tests/report_html.rs).

Parses the page with html5lib, a conforming HTML5 parser, in strict mode (any parse error is
a failure), then walks the tree for anything that would load from outside the file: a URL in
src, href, xlink:href, action, poster, srcset or data attributes, and url(...)/@import in
style. Prints one JSON object: {"errors": [...], "external": [...], "elements": N, "svgs": N}.
"""

import json
import re
import sys

import html5lib

URL_ATTRS = {"src", "href", "action", "poster", "srcset", "data", "formaction", "background"}
EXTERNAL = re.compile(r"^\s*(?:[a-z][a-z0-9+.-]*:|//)", re.I)
CSS_LOAD = re.compile(r"url\s*\(|@import", re.I)


def local_name(name):
    return name.split("}")[-1] if isinstance(name, str) else str(name)


def main(path):
    with open(path, "rb") as f:
        data = f.read()
    errors = []
    parser = html5lib.HTMLParser(strict=False, namespaceHTMLElements=True)
    tree = parser.parse(data)
    for (line, col), code, params in parser.errors:
        errors.append(f"{line}:{col}: {code} {params}")
    external, elements, svgs = [], 0, 0
    for el in tree.iter():
        elements += 1
        tag = local_name(el.tag)
        if tag == "svg":
            svgs += 1
        for key, value in el.attrib.items():
            attr = local_name(key)
            if attr in URL_ATTRS and EXTERNAL.match(value) and not value.startswith("#"):
                external.append(f"<{tag} {attr}={value!r}>")
            if attr == "style" and CSS_LOAD.search(value):
                external.append(f"<{tag} style={value!r}>")
        if tag == "style" and CSS_LOAD.search(el.text or ""):
            external.append("<style> loads a url() or @import")
        if tag in ("script", "iframe", "object", "embed", "link", "base"):
            external.append(f"<{tag}> element")
    print(json.dumps({"errors": errors, "external": external, "elements": elements, "svgs": svgs}))


if __name__ == "__main__":
    main(sys.argv[1])
