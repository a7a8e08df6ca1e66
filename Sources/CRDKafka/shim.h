// librdkafka's client API and its in-process mock cluster (tests and `asnp dev`), from Debian's librdkafka-dev.
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

// Swift cannot call C's variadic functions: one (error, round-trip time) pair pushed for one broker.
static inline rd_kafka_resp_err_t asnp_mock_broker_push_request_error(rd_kafka_mock_cluster_t *mcluster,
                                                                      int32_t broker_id,
                                                                      int16_t api_key,
                                                                      rd_kafka_resp_err_t error,
                                                                      int rtt_ms) {
    return rd_kafka_mock_broker_push_request_error_rtts(mcluster, broker_id, api_key, 1, error, rtt_ms);
}
