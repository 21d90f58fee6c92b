/* libxml2: the strict SAX2 reader and the writer of the KDBX XML document. */
#include <libxml/xmlversion.h>
/* Debian builds libxml2 with ICU; its ICU headers clash with the copy inside Foundation. Nothing
   here touches the ICU converter fields (only pointers to xmlCharEncodingHandler are used). */
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/SAX2.h>
#include <libxml/xmlwriter.h>
