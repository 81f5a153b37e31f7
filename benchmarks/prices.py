"""Published on-demand prices, in one place: what figures 9 and 11 turn units and requests into dollars with.

Every price is us-east-1 (US East, N. Virginia), on-demand, without the free tier (which a busy account
uses up in its first hours), checked on the date written next to it, with the AWS page it belongs to and
how it was confirmed. The AWS pricing pages draw their numbers client-side, so the stored copies of those
pages read for this module hold the rules but not the numbers: each number was confirmed on the
secondary pages named in ``confirmed``, which quote the AWS page. A price that could not be confirmed
says so in ``confirmed`` and in the table (:data:`PRICES`). Change a price here, and rerun figure 9.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "CHECKED_ON",
    "DYNAMODB_READ",
    "DYNAMODB_WRITE",
    "FARGATE_GB_HOUR",
    "FARGATE_VCPU_HOUR",
    "LAMBDA_GB_SECOND",
    "LAMBDA_REQUEST",
    "LOGS_INGESTED_GB",
    "PRICES",
    "REGION",
    "SQS_CHUNK_BYTES",
    "SQS_FIFO_REQUEST",
    "Price",
]

REGION = "us-east-1"
CHECKED_ON = "2026-12-01"
#: SQS bills every 64 KB chunk of a request's payload as one request.
SQS_CHUNK_BYTES = 64 * 1024


@dataclass(frozen=True)
class Price:
    """One published price: dollars per ``per`` units of ``unit``."""

    name: str
    dollars: float
    per: float
    unit: str
    source: str
    confirmed: str
    region: str = REGION
    checked_on: str = CHECKED_ON

    @property
    def dollars_per_unit(self) -> float:
        return self.dollars / self.per

    @property
    def text(self) -> str:
        per = "" if self.per == 1 else "million " if self.per == 1e6 else f"{self.per:,.0f} "
        dollars = f"{self.dollars:.10f}".rstrip("0").rstrip(".")
        return f"${dollars} per {per}{self.unit}"


DYNAMODB_WRITE = Price(
    "DynamoDB on-demand write request units",
    0.625,
    1e6,
    "write request units",
    "https://aws.amazon.com/dynamodb/pricing/on-demand/",
    "airbyte.com/data-engineering-resources/dynamodb-pricing (2025-07-21: after the November 2024 cut "
    "of 50%); the AWS page's key terms (1 unit per 1 KB written, transactional 2) match facts.md",
)
DYNAMODB_READ = Price(
    "DynamoDB on-demand read request units",
    0.125,
    1e6,
    "read request units",
    "https://aws.amazon.com/dynamodb/pricing/on-demand/",
    "airbyte.com/data-engineering-resources/dynamodb-pricing (2025-07-21); the AWS page's key terms "
    "(1 unit per 4 KB strongly consistent, half eventually consistent) match facts.md",
)
SQS_FIFO_REQUEST = Price(
    "SQS FIFO requests (each 64 KB chunk of a payload is one request)",
    0.50,
    1e6,
    "requests",
    "https://aws.amazon.com/sqs/pricing/",
    "cloudburn.io/blog/amazon-sqs-pricing (2026-03) and factualminds.com (2026-06): $0.50 per million "
    "FIFO requests for the first 100 billion a month, 64 KB chunks",
)
LAMBDA_GB_SECOND = Price(
    "Lambda duration (x86_64, the construct's architecture)",
    0.0000166667,
    1,
    "GB-second",
    "https://aws.amazon.com/lambda/pricing/",
    "artillery's Lambda price table (x86_64 1666670e-11 $/GB-s, base regions) and public calculators "
    "for us-east-1; first duration tier (up to 6 billion GB-s a month)",
)
LAMBDA_REQUEST = Price(
    "Lambda requests (one per invocation: one batch)",
    0.20,
    1e6,
    "requests",
    "https://aws.amazon.com/lambda/pricing/",
    "the AWS page's text quotes $0.20 per million requests (api-evangelist's harvest of it, 2026-09-20)",
)
LOGS_INGESTED_GB = Price(
    "CloudWatch Logs ingestion, Lambda logs, Standard class (first tier)",
    0.50,
    1,
    "GB ingested",
    "https://aws.amazon.com/cloudwatch/pricing/",
    "duckbillgroup.com (Lambda logs tiered since 2025-05-01, first 10 TB a month at the old flat "
    "$0.50/GB) and hykell.com ($0.50/GB in us-east-1)",
)

FARGATE_VCPU_HOUR = Price(
    "Fargate vCPU (Linux/x86, on-demand)",
    0.04048,
    1,
    "vCPU-hour",
    "https://aws.amazon.com/fargate/pricing/",
    "vantage.sh/blog/fargate-pricing (Linux/x86 $0.04048 per vCPU per hour, us-east-1), "
    "wring.co/blog/aws-fargate-pricing-guide (2026-03-10) and cloudburn.io (2026-03, from the Price List "
    "API); billed per second, one-minute minimum",
)
FARGATE_GB_HOUR = Price(
    "Fargate memory (Linux/x86, on-demand)",
    0.004445,
    1,
    "GB-hour",
    "https://aws.amazon.com/fargate/pricing/",
    "vantage.sh/blog/fargate-pricing (Linux/x86 $0.004445 per GB per hour, us-east-1) and "
    "wring.co/blog/aws-fargate-pricing-guide (2026-03-10); the first 20 GB of ephemeral storage included",
)

#: Every price figure 9 uses, in the order of its dollar rows.
PRICES = (DYNAMODB_WRITE, DYNAMODB_READ, SQS_FIFO_REQUEST, LAMBDA_GB_SECOND, LAMBDA_REQUEST, LOGS_INGESTED_GB)
