#!/usr/bin/env python3
"""A downstream consumer of the pipeline's output topics (Docs/contract/README.md, "A complete consumer").

One consumer group reads both topics:
- the decoded topic: each notification handled once (deduplicated on ce_id), in order per key, the offsets
  committed only after handling;
- the state topic, as a table: per subscription (key), the latest state.

    pip install confluent-kafka
    python3 consumer.py --bootstrap-servers HOST:PORT [--group ID]
"""

import argparse
import collections
import dataclasses
import json
import logging
import signal

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaException, TopicPartition

DECODED_TOPIC = "appstore.notifications.decoded"
STATE_TOPIC = "appstore.subscriptions.state"
DECODED_V2 = "urn:asnp:contract:decoded-v2:1"
DECODED_V1 = "urn:asnp:contract:decoded-v1:1"
SUBSCRIPTION_STATE = "urn:asnp:contract:subscription-state:1"

log = logging.getLogger("downstream")


@dataclasses.dataclass(frozen=True)
class Notification:
    id: str  # ce_id: the deduplication key
    key: str  # the originalTransactionId (the ce_id for a notification without one)
    schema: str  # ce_dataschema: which shape the value had
    notification_type: str
    product_id: str | None


class RecentIDs:
    """The last `capacity` ids added. A real consumer keeps them in its own database and records each in the same
    transaction as the event's effect, so that neither a crash nor a partition moving to another member (both
    replay events) repeats an effect."""

    def __init__(self, capacity=100_000):
        self.capacity = capacity
        self.ids = collections.OrderedDict()

    def __contains__(self, ce_id):
        return ce_id in self.ids

    def add(self, ce_id):
        self.ids[ce_id] = None
        if len(self.ids) > self.capacity:
            self.ids.popitem(last=False)


class DownstreamConsumer:
    def __init__(self, bootstrap_servers, group, handle):
        self.handle = handle
        self.seen = RecentIDs()
        self.tables = {}  # (topic, partition) of the state topic -> {key: latest state}
        self.consumer = Consumer({
            "bootstrap.servers": bootstrap_servers,
            "group.id": group,
            "enable.auto.commit": False,  # offsets are committed after handling, below
            "auto.offset.reset": "earliest",
        })
        self.consumer.subscribe([DECODED_TOPIC, STATE_TOPIC], on_assign=self.assigned, on_revoke=self.revoked)

    def assigned(self, consumer, partitions):
        # The state topic's offsets are never committed: it is read from its first event on every assignment.
        for partition in partitions:
            if partition.topic == STATE_TOPIC:
                partition.offset = OFFSET_BEGINNING
        consumer.assign(partitions)

    def revoked(self, consumer, partitions):
        # Their next owner reads them from the beginning.
        for partition in partitions:
            self.tables.pop((partition.topic, partition.partition), None)

    def subscriptions(self):
        """The table: each subscription whose state partition this member owns -> its latest state."""
        return {key: state for table in self.tables.values() for key, state in table.items()}

    def run(self, stopping):
        """Consumes until `stopping()`; raises what `handle` raises, without committing that event."""
        try:
            while not stopping():
                # Messages come in offset order per partition, so per key: each is handled before the next one.
                messages = self.consumer.consume(num_messages=500, timeout=0.5)
                for message in messages:
                    if message.error():
                        if message.error().fatal():
                            raise KafkaException(message.error())
                        log.warning("%s", message.error())
                    elif message.topic() == STATE_TOPIC:
                        self.apply(message)
                    else:
                        self.handle_decoded(message)
                self.commit([m for m in messages if not m.error() and m.topic() == DECODED_TOPIC])
        finally:
            self.consumer.close()

    def commit(self, messages):
        offsets = {(m.topic(), m.partition()): m.offset() + 1 for m in messages}
        if not offsets:
            return
        try:
            self.consumer.commit(offsets=[TopicPartition(t, p, o) for (t, p), o in offsets.items()], asynchronous=False)
        except KafkaException as error:
            # The partitions moved or the coordinator is unreachable: these events come again, as duplicates.
            log.warning("offsets not committed: %s", error)

    def handle_decoded(self, message):
        headers = dict(message.headers() or [])
        ce_id, key = headers.get("ce_id", b"").decode(), (message.key() or b"").decode()
        schema = headers.get("ce_dataschema", b"").decode()
        if not ce_id or not key:
            log.error("skipping an event without ce_id or key")
            return
        try:
            if schema == DECODED_V2:
                value = json.loads(message.value())
                product_id = (value.get("transactionInfo") or {}).get("productId")
                notification = Notification(ce_id, key, schema, value["payload"]["notificationType"], product_id)
            elif schema == DECODED_V1:
                value = json.loads(message.value())
                notification = Notification(
                    ce_id, key, schema, value["notification_type"], value.get("auto_renew_product_id")
                )
            else:
                # A major this consumer does not know yet (Docs/contract/README.md, compatibility policy).
                log.info("skipping an event of an unknown schema: ce_dataschema=%s", schema)
                return
        except (ValueError, KeyError, TypeError, AttributeError):
            log.error("skipping an event that does not match its schema: ce_id=%s", ce_id)
            return
        # Deduplicated after the schema switch: an event published in two majors has one ce_id.
        if ce_id in self.seen:
            return
        self.handle(notification)
        self.seen.add(ce_id)

    def apply(self, message):
        """The latest event per key wins, as compaction keeps it: a state published again, or an older state between
        two newer ones, is overwritten by the last."""
        headers = dict(message.headers() or [])
        key, schema = (message.key() or b"").decode(), headers.get("ce_dataschema", b"").decode()
        if schema != SUBSCRIPTION_STATE:
            log.info("skipping a state of an unknown schema: ce_dataschema=%s", schema)
            return
        try:
            state = json.loads(message.value())
        except ValueError:
            log.error("skipping a state that is not JSON: key=%s", key)
            return
        self.tables.setdefault((message.topic(), message.partition()), {})[key] = state
        print(f"state {key}: {state.get('last_notification_type')} {state.get('product_id')}", flush=True)


def main():
    parser = argparse.ArgumentParser(description="Consume the pipeline's decoded and state topics.")
    parser.add_argument("--bootstrap-servers", required=True, help="HOST:PORT[,HOST:PORT...]")
    parser.add_argument("--group", default="downstream-example", help="the consumer group (default: %(default)s)")
    arguments = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")

    stop = []
    for signal_number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signal_number, lambda *_: stop.append(True))

    def handle(notification):
        # The application's effect; here, a line on standard output.
        print(f"{notification.key} {notification.notification_type} ce_id={notification.id}", flush=True)

    consumer = DownstreamConsumer(arguments.bootstrap_servers, arguments.group, handle)
    consumer.run(stopping=lambda: bool(stop))


if __name__ == "__main__":
    main()
