/* libxml2: the strict SAX2 reader and the writer of the KDBX XML document. */
#include <libxml/parser.h>
#include <libxml/SAX2.h>
#include <libxml/xmlwriter.h>
