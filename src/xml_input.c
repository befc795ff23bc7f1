/*
 * xml_input.c — reading the XML files that cross machines (timing databases, results files) with
 * libxml2, safely: both formats are plain elements and attributes, so a document type declaration
 * is refused as soon as the parser meets it.  Without a DTD there are no entities but the five
 * predefined ones, hence no entity expansion (a "billion laughs" file, or one that references a
 * large entity 40,000 times in an attribute, costs a linear parse and an error), and nothing is
 * ever fetched (XML_PARSE_NONET, no DTD loading, no XInclude).  Errors are located file:line:col;
 * of a file that is not well-formed, the first libxml2 reports, the cause (keep_first_error).
 *
 * Two readings: a tree (xml_read_untrusted, for results files and the calibration store), and a
 * stream of start and end tags (xml_stream_untrusted) for the timing database, whose 100,000
 * elements cost more to build and free as a tree (0.14 s) than the search of a seed spec.
 * A tree's readers locate their messages with xml_element_place and xml_attr_place, which find
 * an element's start tag, and an attribute's value, in the text (libxml2 keeps lines only).
 *
 * Both refuse an attribute holding a control character (a C0 code, which XML admits as &#10;,
 * &#13; or &#9;, DEL, a C1 code, or a bidirectional override or isolate): the commands print
 * these files' names and values, where a newline would forge a line of output, a C1 code start
 * a terminal escape and a bidirectional control reorder what the terminal shows.  Refused here,
 * once for every reader, no message or table has to escape them.
 */
#include "kasgen.h"

#include <libxml/SAX2.h>
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/tree.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A reading in progress, reached from libxml2's callbacks through the context's _private
 * pointer: whether a <!DOCTYPE> was met (set by refuse_doctype), and for a stream the handler,
 * the depth, and the buffers that hold the current element's attributes NUL-terminated. */
typedef struct {
  bool doctype;
  int line, col;
  /* The parse's first error (keep_first_error): its message (malloc'ed, NULL while none), line
   * and column. */
  char *error;
  int error_line, error_col;
  const XmlHandler *handler;
  const char *path, *text; /* for messages */
  bool stopped; /* the handler asked to stop, or an attribute was refused */
  int depth;
  char *chars;  /* the attribute values, one after another */
  size_t chars_cap;
  const char **names, **values;
  int attrs_cap;
} Reading;

/* SAX callback for <!DOCTYPE ...>: stop before any declaration inside it is read. */
static void refuse_doctype(void *ctx, const xmlChar *name, const xmlChar *external_id,
                           const xmlChar *system_id) {
  (void)name;
  (void)external_id;
  (void)system_id;
  xmlParserCtxtPtr ctxt = ctx;
  Reading *seen = ctxt->_private;
  seen->doctype = true;
  seen->line = ctxt->input ? ctxt->input->line : 0;
  seen->col = ctxt->input ? ctxt->input->col : 0;
  xmlStopParser(ctxt);
}

/* libxml2 stores an element's line in 16 bits (65535 for every line after it): an element that
 * starts further down records its real line in the node's _private field, which libxml2 leaves
 * to applications.  (Results files of 150,000 rows are real.) */
static void start_element_with_line(void *ctx, const xmlChar *localname, const xmlChar *prefix,
                                    const xmlChar *uri, int nb_namespaces,
                                    const xmlChar **namespaces, int nb_attributes,
                                    int nb_defaulted, const xmlChar **attributes) {
  xmlParserCtxtPtr ctxt = ctx;
  xmlSAX2StartElementNs(ctx, localname, prefix, uri, nb_namespaces, namespaces, nb_attributes,
                        nb_defaulted, attributes);
  if (ctxt->node && ctxt->input && ctxt->input->line >= 65535)
    ctxt->node->_private = (void *)(intptr_t)ctxt->input->line;
}

long xml_line(const struct _xmlNode *node) {
  if (!node) return 0;
  if (node->type == XML_ELEMENT_NODE && node->_private) return (long)(intptr_t)node->_private;
  long line = xmlGetLineNo(node);
  return line > 0 ? line : 0;
}

/* ---- places in the text, for messages ----------------------------------------------------- */

/* A line as a place: xml_line's (0 when unknown), within what a message shows. */
static TextPlace line_place(long line) {
  return (TextPlace){.line = line > 0 && line <= INT_MAX ? (int)line : 0};
}

/* The end of line `line` of text (its '\n', or the text's end). */
static const char *line_end(const char *text, int line) {
  for (int l = 1; l < line; l++) {
    const char *nl = strchr(text, '\n');
    if (!nl) break;
    text = nl + 1;
  }
  return text + strcspn(text, "\n");
}

/* The last "<name" tag opened before end, or NULL. */
static const char *last_tag_open(const char *text, const char *end, const char *name) {
  size_t len = strlen(name);
  for (const char *s = end; s-- > text;)
    if (*s == '<' && !strncmp(s + 1, name, len) && s[1 + len] && strchr(" \t\r\n/>", s[1 + len]))
      return s;
  return NULL;
}

/* At s (after a space inside a start tag): attr, '=' and a quote, spaces allowed around '=';
 * the value's first character, or NULL. */
static const char *value_after_name(const char *s, const char *attr) {
  size_t len = strlen(attr);
  if (strncmp(s, attr, len)) return NULL;
  s += len + strspn(s + len, " \t\r\n");
  if (*s != '=') return NULL;
  s += 1 + strspn(s + 1, " \t\r\n");
  return *s == '"' || *s == '\'' ? s + 1 : NULL;
}

/* Where node's start tag opens in text, its '<' (NULL where the text does not show it), with its
 * line in *at (the line alone without it) and that line's start in *line_start.  The tag ends on
 * the line libxml2 gives for the node: a tag may go on over lines, and a value may hold '>'. */
static const char *tag_open(const char *text, const xmlNode *node, TextPlace *at,
                            const char **line_start) {
  *at = line_place(xml_line(node));
  if (!at->line) return NULL;
  const char *end = line_end(text, at->line);
  const char *s = last_tag_open(text, end, (const char *)node->name);
  if (!s) return NULL;
  for (const char *c = s; c < end; c++) at->line -= *c == '\n';
  for (*line_start = s; *line_start > text && (*line_start)[-1] != '\n';) --*line_start;
  return s;
}

TextPlace xml_element_place(const char *text, const struct _xmlNode *node) {
  TextPlace at;
  const char *start, *s = tag_open(text, node, &at, &start);
  if (s) at.col = (int)(s - start) + 1;
  return at;
}

TextPlace xml_attr_place(const char *text, const struct _xmlNode *node, const char *attr) {
  TextPlace place;
  const char *start, *s = tag_open(text, node, &place, &start);
  if (!s) return place;
  for (char quote = 0; *++s && (quote || *s != '>');) {
    if (*s == '\n') place.line++, start = s + 1;
    if (quote) quote = *s == quote ? 0 : quote;
    else if (*s == '"' || *s == '\'') quote = *s;
    else if (strchr(" \t\r\n", s[-1])) {
      const char *value = value_after_name(s, attr);
      if (!value) continue;
      for (; s < value; s++)
        if (*s == '\n') place.line++, start = s + 1;
      place.col = (int)(value - start) + 1;
      return place;
    }
  }
  return xml_element_place(text, node);
}

/* ---- control characters ------------------------------------------------------------------- */

/* The control character p starts with, as a message shows it: \n, \r, \t, \xNN or U+NNNN
 * (a C1 code, two bytes in UTF-8, or a bidirectional control, three). */
static void show_control_char(const char *p, char shown[8]) {
  const unsigned char *u = (const unsigned char *)p;
  if (u[0] == '\n' || u[0] == '\r' || u[0] == '\t')
    snprintf(shown, 8, "\\%c", u[0] == '\n' ? 'n' : u[0] == '\r' ? 'r' : 't');
  else if (u[0] == 0xc2)
    snprintf(shown, 8, "U+%04X", u[1]);
  else if (u[0] == 0xe2)
    snprintf(shown, 8, "U+%04X", (u[0] & 0x0f) << 12 | (u[1] & 0x3f) << 6 | (u[2] & 0x3f));
  else
    snprintf(shown, 8, "\\x%02x", u[0]);
}

/* Whether attribute attr of <element>, at line, holds no control character; false after a
 * located error showing the first. */
static bool plain_attribute(const char *path, const char *text, long line, const char *element,
                            const char *attr, const char *value) {
  const char *p = value;
  while (*p && !control_char_len(p)) p++;
  if (!*p) return true;
  char shown[8];
  show_control_char(p, shown);
  diag_error((SrcLoc){.file = path, .text = text, .line = (int)line},
             "the attribute %s of <%s> holds a control character (%s): kasgen prints this "
             "file's text, where it would forge lines or terminal escapes", attr, element, shown);
  return false;
}

/* Every attribute of the elements from node on and inside them (libxml2 bounds the depth at
 * 256) through plain_attribute; false at the first that is not plain. */
static bool plain_tree(const char *path, const char *text, xmlNodePtr node) {
  for (; node; node = node->next) {
    if (node->type != XML_ELEMENT_NODE) continue;
    for (xmlAttrPtr a = node->properties; a; a = a->next)
      for (xmlNodePtr v = a->children; v; v = v->next)
        if (v->content && !plain_attribute(path, text, xml_line(node), (const char *)node->name,
                                           (const char *)a->name, (const char *)v->content))
          return false;
    if (!plain_tree(path, text, node->children)) return false;
  }
  return true;
}

/* libxml2's structured errors: the argument's type gained a const in 2.12. */
#if LIBXML_VERSION >= 21200
typedef const xmlError *ErrorArg;
#else
typedef xmlError *ErrorArg;
#endif

/* Keeps the parse's first error: the cause.  libxml2 goes on after it and reports what follows
 * from it (a file cut off inside a value gets "AttValue: ' expected", "attributes construct
 * error", "Couldn't find end of Start Tag" and "Premature end of data"), and only the last is
 * left in the context.  Warnings are not errors. */
static void keep_first_error(void *ctx, ErrorArg err) {
  xmlParserCtxtPtr ctxt = ctx;
  Reading *r = ctxt->_private;
  if (r->error || !err || err->level < XML_ERR_ERROR) return;
  r->error = xstrdup(err->message ? err->message : "not well-formed XML");
  r->error_line = err->line;
  r->error_col = err->int2;
}

/* The file is not well-formed XML (malformed, or truncated: libxml2 places the end of a file cut
 * off mid-tag where it ends): libxml2's own message of its first error (keep_first_error), else
 * of its last, at its line and column. */
static void report_libxml_error(const char *path, const char *text, xmlParserCtxtPtr ctxt,
                                const Reading *r) {
  const xmlError *last = xmlCtxtGetLastError(ctxt);
  SrcLoc loc = {.file = path, .text = text};
  const char *why = "not well-formed XML";
  if (r->error) {
    loc.line = r->error_line, loc.col = r->error_col, why = r->error;
  } else if (last) {
    loc.line = last->line, loc.col = last->int2;
    if (last->message) why = last->message;
  }
  char *msg = xstrdup(why);
  size_t len = strlen(msg);
  while (len && (msg[len - 1] == '\n' || msg[len - 1] == ' ')) msg[--len] = '\0';
  diag_error(loc, "not well-formed XML: %s", msg);
  free(msg);
}

/* A parser that refuses a <!DOCTYPE> and reports nothing itself; NULL after an error. */
static xmlParserCtxtPtr new_parser(const char *path, size_t len, Reading *reading) {
  if (len > INT_MAX) {
    diag_error((SrcLoc){.file = path}, "file too large for the XML parser");
    return NULL;
  }
  xmlParserCtxtPtr ctxt = xmlNewParserCtxt();
  if (!ctxt) {
    diag_error((SrcLoc){.file = path}, "cannot create an XML parser");
    return NULL;
  }
  ctxt->_private = reading;
  ctxt->sax->serror = keep_first_error;
  return ctxt;
}

/* NONET: never fetch anything; NOERROR/NOWARNING: errors are reported here, located.  No NOENT,
 * no DTDLOAD, no XINCLUDE. */
enum { SAFE_OPTIONS = XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING };

/* After a parse: the located error of a <!DOCTYPE> or of XML that is not well-formed; true when
 * neither. */
static bool check_parse(const char *path, const char *text, xmlParserCtxtPtr ctxt,
                        const Reading *reading) {
  if (reading->doctype) {
    diag_error((SrcLoc){.file = path, .text = text, .line = reading->line, .col = reading->col},
               "a document type declaration (<!DOCTYPE>) is not allowed here: the format has "
               "no DTD and kasgen expands no entities");
    return false;
  }
  if (reading->stopped) return false; /* the handler, or plain_attribute, has said why */
  if (!ctxt->wellFormed) {
    report_libxml_error(path, text, ctxt, reading);
    return false;
  }
  return true;
}

xmlDocPtr xml_read_untrusted(const char *path, const char *text, size_t len) {
  Reading reading = {0};
  xmlParserCtxtPtr ctxt = new_parser(path, len, &reading);
  if (!ctxt) return NULL;
  ctxt->sax->internalSubset = refuse_doctype;
  ctxt->sax->startElementNs = start_element_with_line;
  /* NOBLANKS, COMPACT: kasgen's formats carry everything in attributes, so the indentation
   * between elements need not become nodes, and small strings live in the nodes. */
  xmlDocPtr doc = xmlCtxtReadMemory(ctxt, text, (int)len, path, NULL,
                                    SAFE_OPTIONS | XML_PARSE_NOBLANKS | XML_PARSE_COMPACT);
  bool ok = check_parse(path, text, ctxt, &reading);
  if (ok && !doc) report_libxml_error(path, text, ctxt, &reading); /* well-formed, no doc */
  if (ok && doc) ok = plain_tree(path, text, doc->children);
  if (!ok || !doc) {
    xmlFreeDoc(doc);
    doc = NULL;
  }
  xmlFreeParserCtxt(ctxt);
  free(reading.error);
  return doc;
}

/* ---- the stream --------------------------------------------------------------------------- */

/* Copies an attribute value NUL-terminated.  Without entity replacement libxml2 hands over a
 * value with every reference decoded except an ampersand, which it leaves as "&#38;" (its SAX2
 * tree builder decodes that one itself); so does this. */
static char *copy_value(char *to, const xmlChar *from, const xmlChar *end) {
  static const char amp[] = "&#38;";
  while (from < end) {
    size_t left = (size_t)(end - from);
    if (*from == '&' && left >= sizeof amp - 1 && !memcmp(from, amp, sizeof amp - 1)) {
      *to++ = '&';
      from += sizeof amp - 1;
    } else {
      *to++ = (char)*from++;
    }
  }
  *to++ = '\0';
  return to;
}

/* The element's attributes into the reading's buffers (grown, never shrunk: after the first few
 * elements of a database no allocation is made). */
static void gather_attributes(Reading *r, int nattrs, const xmlChar **attributes) {
  size_t need = 1;
  for (int i = 0; i < nattrs; i++)
    need += (size_t)(attributes[5 * i + 4] - attributes[5 * i + 3]) + 1;
  if (need > r->chars_cap) {
    r->chars_cap = 2 * need;
    r->chars = xrealloc(r->chars, r->chars_cap);
  }
  if (nattrs > r->attrs_cap) {
    r->attrs_cap = 2 * nattrs;
    r->names = xrealloc(r->names, sizeof *r->names * (size_t)r->attrs_cap);
    r->values = xrealloc(r->values, sizeof *r->values * (size_t)r->attrs_cap);
  }
  char *at = r->chars;
  for (int i = 0; i < nattrs; i++) {
    r->names[i] = (const char *)attributes[5 * i];
    r->values[i] = at;
    at = copy_value(at, attributes[5 * i + 3], attributes[5 * i + 4]);
  }
}

static void stop_stream(xmlParserCtxtPtr ctxt, Reading *r) {
  r->stopped = true;
  xmlStopParser(ctxt);
}

/* Whether the start tag just read ends here ('>' or "/>" next).  libxml2 hands over a start tag
 * cut off by the end of the file (a truncated database) before it finds it unterminated, and
 * the handler would report the attributes it lacks instead of the truncation. */
static bool start_tag_closed(xmlParserCtxtPtr ctxt) {
  if (!ctxt->input) return true;
  const xmlChar *cur = ctxt->input->cur, *end = ctxt->input->end;
  return cur < end && (*cur == '>' || (*cur == '/' && cur + 1 < end && cur[1] == '>'));
}

static void stream_start(void *ctx, const xmlChar *localname, const xmlChar *prefix,
                         const xmlChar *uri, int nb_namespaces, const xmlChar **namespaces,
                         int nb_attributes, int nb_defaulted, const xmlChar **attributes) {
  (void)prefix;
  (void)uri;
  (void)nb_namespaces;
  (void)namespaces;
  (void)nb_defaulted; /* none: there is no DTD to default them */
  xmlParserCtxtPtr ctxt = ctx;
  Reading *r = ctxt->_private;
  if (r->stopped || !start_tag_closed(ctxt)) return; /* libxml2 reports an unclosed tag next */
  gather_attributes(r, nb_attributes, attributes);
  XmlElement el = {.name = (const char *)localname, .depth = r->depth++,
                   .line = ctxt->input ? ctxt->input->line : 0, .nattrs = nb_attributes,
                   .attr_names = r->names, .attr_values = r->values};
  for (int i = 0; i < el.nattrs; i++)
    if (!plain_attribute(r->path, r->text, el.line, el.name, el.attr_names[i],
                         el.attr_values[i])) {
      stop_stream(ctxt, r);
      return;
    }
  if (!r->handler->start(r->handler->ctx, &el)) stop_stream(ctxt, r);
}

static void stream_end(void *ctx, const xmlChar *localname, const xmlChar *prefix,
                       const xmlChar *uri) {
  (void)prefix;
  (void)uri;
  xmlParserCtxtPtr ctxt = ctx;
  Reading *r = ctxt->_private;
  if (r->stopped) return;
  XmlElement el = {.name = (const char *)localname, .depth = --r->depth,
                   .line = ctxt->input ? ctxt->input->line : 0};
  if (r->handler->end && !r->handler->end(r->handler->ctx, &el)) stop_stream(ctxt, r);
}

bool xml_stream_untrusted(const char *path, const char *text, size_t len, const XmlHandler *h) {
  Reading reading = {.handler = h, .path = path, .text = text};
  xmlParserCtxtPtr ctxt = new_parser(path, len, &reading);
  if (!ctxt) return false;
  /* Only these callbacks: no document, no nodes, no text. */
  xmlSAXHandler sax = {.initialized = XML_SAX2_MAGIC, .internalSubset = refuse_doctype,
                       .startElementNs = stream_start, .endElementNs = stream_end,
                       .serror = keep_first_error};
  *ctxt->sax = sax;
  xmlDocPtr doc = xmlCtxtReadMemory(ctxt, text, (int)len, path, NULL, SAFE_OPTIONS);
  xmlFreeDoc(doc); /* none is built; freed should libxml2 ever make one */
  bool ok = check_parse(path, text, ctxt, &reading);
  xmlFreeParserCtxt(ctxt);
  free(reading.chars);
  free(reading.names);
  free(reading.values);
  free(reading.error);
  return ok;
}

const char *xml_attr(const XmlElement *el, const char *name) {
  for (int i = 0; i < el->nattrs; i++)
    if (!strcmp(el->attr_names[i], name)) return el->attr_values[i];
  return NULL;
}
