/*
 * xml_input.c — reading the XML files that cross machines (timing databases, results files) with
 * libxml2, safely: both formats are plain elements and attributes, so a document type declaration
 * is refused as soon as the parser meets it.  Without a DTD there are no entities but the five
 * predefined ones, hence no entity expansion (a "billion laughs" file, or one that references a
 * large entity 40,000 times in an attribute, costs a linear parse and an error), and nothing is
 * ever fetched (XML_PARSE_NONET, no DTD loading, no XInclude).  Errors are located file:line:col.
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

/* Set by refuse_doctype while a parse runs (libxml2 calls it from inside xmlCtxtReadMemory);
 * reached through the context's _private pointer. */
typedef struct {
  bool doctype;
  int line, col;
} DoctypeSeen;

/* SAX callback for <!DOCTYPE ...>: stop before any declaration inside it is read. */
static void refuse_doctype(void *ctx, const xmlChar *name, const xmlChar *external_id,
                           const xmlChar *system_id) {
  (void)name;
  (void)external_id;
  (void)system_id;
  xmlParserCtxtPtr ctxt = ctx;
  DoctypeSeen *seen = ctxt->_private;
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

/* libxml2's own message (malformed or truncated XML) at its line and column. */
static void report_libxml_error(const char *path, const char *text, xmlParserCtxtPtr ctxt) {
  const xmlError *err = xmlCtxtGetLastError(ctxt);
  SrcLoc loc = {.file = path, .text = text, .line = err ? err->line : 0,
                .col = err ? err->int2 : 0};
  char *msg = xstrdup(err && err->message ? err->message : "not well-formed XML");
  size_t len = strlen(msg);
  while (len && (msg[len - 1] == '\n' || msg[len - 1] == ' ')) msg[--len] = '\0';
  diag_error(loc, "malformed XML: %s", msg);
  free(msg);
}

xmlDocPtr xml_read_untrusted(const char *path, const char *text, size_t len) {
  if (len > INT_MAX) {
    diag_error((SrcLoc){.file = path}, "file too large for the XML parser");
    return NULL;
  }
  xmlParserCtxtPtr ctxt = xmlNewParserCtxt();
  if (!ctxt) {
    diag_error((SrcLoc){.file = path}, "cannot create an XML parser");
    return NULL;
  }
  DoctypeSeen doctype_seen = {0};
  ctxt->sax->internalSubset = refuse_doctype;
  ctxt->sax->startElementNs = start_element_with_line;
  ctxt->_private = &doctype_seen;
  /* NONET: never fetch anything; NOERROR/NOWARNING: errors are reported here, located.  No
   * NOENT, no DTDLOAD, no XINCLUDE.  NOBLANKS, COMPACT: kasgen's formats carry everything in
   * attributes, so the indentation between elements need not become nodes (half of a timing
   * database's nodes), and small strings live in the nodes. */
  xmlDocPtr doc = xmlCtxtReadMemory(ctxt, text, (int)len, path, NULL,
                                    XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING |
                                        XML_PARSE_NOBLANKS | XML_PARSE_COMPACT);
  if (doctype_seen.doctype) {
    xmlFreeDoc(doc);
    doc = NULL;
    diag_error((SrcLoc){.file = path, .text = text, .line = doctype_seen.line,
                        .col = doctype_seen.col},
               "a document type declaration (<!DOCTYPE>) is not allowed here: the format has "
               "no DTD and kasgen expands no entities");
  } else if (!doc) {
    report_libxml_error(path, text, ctxt);
  }
  xmlFreeParserCtxt(ctxt);
  return doc;
}
