"""The 16 hash-bucket partitions every per-article asset shares."""

from dagster import StaticPartitionsDefinition

from petrichor_core.config import BUCKETS

buckets = StaticPartitionsDefinition(list(BUCKETS))
