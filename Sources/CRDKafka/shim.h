// librdkafka's client API and its in-process mock cluster (tests and `asnp dev`), from Debian's librdkafka-dev.
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
