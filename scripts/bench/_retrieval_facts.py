# ruff: noqa: E501  (one fact or query a line: the data reads better unwrapped)
"""The facts and queries of the labelled retrieval set (see make_retrieval_set.py).

FACTS: (key, team, text). QUERIES: (kind, text, relevant keys).
"""

from __future__ import annotations

FACTS: list[tuple[str, str, str]] = [
    # --- Oracle errors (data) ---
    (
        "ora942",
        "data",
        "The nightly ETL into the warehouse fails with ORA-00942 because the staging table was renamed to STG_ORDERS_V2 without updating the loader.",
    ),
    (
        "ora904",
        "data",
        "The nightly ETL into the warehouse fails with ORA-00904 because the loader still selects the dropped column DISCOUNT_CODE.",
    ),
    (
        "ora1555",
        "data",
        "Long reporting queries on the finance replica hit ORA-01555 snapshot too old; the undo retention was raised to 3 hours.",
    ),
    (
        "ora1017",
        "data",
        "The reporting service gets ORA-01017 after the quarterly password rotation until its wallet is refreshed.",
    ),
    (
        "ora12541",
        "data",
        "Batch jobs on the Oracle side report ORA-12541 no listener whenever the listener on the standby restarts during patching.",
    ),
    (
        "ora12514",
        "data",
        "Batch jobs on the Oracle side report ORA-12514 because the service name in the connect string still points at the old PDB.",
    ),
    # --- CVEs (security) ---
    (
        "cve3094",
        "security",
        "CVE-2024-3094 is the xz/liblzma backdoor; all build images were rebuilt with xz 5.4.6 and the affected 5.6.0 packages were purged.",
    ),
    (
        "cve3049",
        "security",
        "CVE-2024-3049 affects the booth cluster ticket manager; our HA pair is not exposed because booth is not installed.",
    ),
    (
        "cve44228",
        "security",
        "CVE-2021-44228 in log4j was patched on every JVM service by moving to log4j 2.17.1; the scanner now blocks older jars.",
    ),
    (
        "cve45046",
        "security",
        "CVE-2021-45046 needed a second log4j upgrade on the search cluster, which had only the partial 2.15 fix.",
    ),
    (
        "cve44487",
        "security",
        "CVE-2023-44487, the HTTP/2 rapid reset attack, is mitigated at the edge by capping concurrent streams to 100 per connection.",
    ),
    (
        "cve4863",
        "security",
        "CVE-2023-4863 in libwebp required rebuilding the thumbnail service with the patched image library.",
    ),
    (
        "cve4911",
        "security",
        "CVE-2023-4911, the glibc Looney Tunables bug, was fixed by rebasing the base image onto the patched glibc release.",
    ),
    (
        "cve38545",
        "security",
        "CVE-2023-38545 in curl's SOCKS5 handling does not reach us; no service routes curl through a SOCKS proxy.",
    ),
    # --- sibling file paths (payments, platform) ---
    (
        "invoice_py",
        "payments",
        "Tax rounding for each line item happens in src/billing/invoice.py; it rounds half-up to the cent before summing.",
    ),
    (
        "invoices_py",
        "payments",
        "The customer portal lists past bills through src/billing/invoices.py, which pages through the ledger 50 rows at a time.",
    ),
    (
        "refund_py",
        "payments",
        "Partial refunds are computed in src/billing/refund.py and must never exceed the captured amount of the charge.",
    ),
    (
        "refunds_py",
        "payments",
        "The nightly reconciliation of refunds lives in src/billing/refunds.py and posts mismatches to the finance channel.",
    ),
    (
        "token_py",
        "platform",
        "Access tokens are minted in src/auth/token.py with a 15 minute lifetime and the kid header of the active signing key.",
    ),
    (
        "tokens_py",
        "platform",
        "src/auth/tokens.py revokes refresh tokens in bulk when a user resets the password.",
    ),
    (
        "session_py",
        "platform",
        "Session cookies are set in src/auth/session.py with SameSite=Lax and an idle timeout of 30 minutes.",
    ),
    (
        "sessions_py",
        "platform",
        "src/auth/sessions.py garbage collects expired sessions from Redis every ten minutes.",
    ),
    (
        "deploy_yaml",
        "infra",
        "The production rollout order is defined in deploy/prod/values.yaml; canary gets 5 percent of traffic for 20 minutes.",
    ),
    (
        "deploy_stage_yaml",
        "infra",
        "deploy/staging/values.yaml turns on debug logging and uses a single replica per service.",
    ),
    (
        "ci_yml",
        "platform",
        "The monorepo pipeline is .github/workflows/ci.yml; it runs unit tests in 8 shards and caches the Poetry virtualenv.",
    ),
    (
        "release_yml",
        "platform",
        ".github/workflows/release.yml tags images and pushes them to the registry only from the main branch.",
    ),
    # --- tickets ---
    (
        "jira4411",
        "payments",
        "JIRA-4411 tracks the duplicate charge seen when a customer double-clicks pay on a slow connection; an idempotency key fixes it.",
    ),
    (
        "jira4412",
        "payments",
        "JIRA-4412 tracks the currency rounding error on Japanese yen invoices, which have no minor unit.",
    ),
    (
        "jira4413",
        "payments",
        "JIRA-4413 tracks the missing VAT number on invoices for customers in Belgium.",
    ),
    (
        "jira4141",
        "payments",
        "JIRA-4141 was closed as won't fix: the legacy PayPal checkout is being retired in March.",
    ),
    (
        "ops1207",
        "infra",
        "OPS-1207 is the request to raise the AWS Lambda concurrency quota in eu-west-1 from 1000 to 3000.",
    ),
    (
        "ops1270",
        "infra",
        "OPS-1270 asks to move the bastion host behind the new VPN and to close port 22 to the internet.",
    ),
    (
        "ops1027",
        "infra",
        "OPS-1027 documents the manual failover of the primary Postgres cluster, tested last on the staging environment.",
    ),
    (
        "data311",
        "data",
        "DATA-311 is the backfill of the clickstream table for the two days lost during the Kafka outage.",
    ),
    (
        "data313",
        "data",
        "DATA-313 is the schema change adding a consent flag to the clickstream table, approved by legal.",
    ),
    (
        "data331",
        "data",
        "DATA-331 reports that the clickstream table double counts sessions that cross midnight UTC.",
    ),
    (
        "sec88",
        "security",
        "SEC-88 is the pentest finding about verbose stack traces on the admin login page; fixed by the generic error page.",
    ),
    (
        "sec89",
        "security",
        "SEC-89 is the pentest finding about missing rate limiting on the password reset endpoint.",
    ),
    (
        "sec98",
        "security",
        "SEC-98 is the pentest finding about an S3 bucket listing that exposed build artifacts; the bucket policy was tightened.",
    ),
    (
        "inc2291",
        "support",
        "INC-2291 was the checkout outage on Black Friday caused by an expired TLS certificate on the payment gateway.",
    ),
    (
        "inc2219",
        "support",
        "INC-2219 was the login outage caused by a misconfigured rate limit that blocked the office NAT address.",
    ),
    (
        "inc2292",
        "support",
        "INC-2292 was the search outage when the Elasticsearch heap filled up after a mapping explosion.",
    ),
    # --- versions ---
    (
        "gw2143",
        "platform",
        "API gateway v2.14.3 fixes the header size regression introduced in v2.14.2 and is the version to run in production.",
    ),
    (
        "gw2142",
        "platform",
        "API gateway v2.14.2 rejects requests with headers larger than 8 KB, which broke the SSO callback; do not deploy it.",
    ),
    (
        "gw2150",
        "platform",
        "API gateway v2.15.0 adds gRPC transcoding but is still in canary on the staging cluster.",
    ),
    (
        "gw2134",
        "platform",
        "API gateway v2.13.4 is the last version that supports the deprecated XML error format some partners still parse.",
    ),
    (
        "pg163",
        "data",
        "Postgres 16.3 is the target for the analytics cluster upgrade; the extension pg_partman needs version 5 first.",
    ),
    (
        "pg162",
        "data",
        "Postgres 16.2 on the orders cluster has the logical replication slot bug, so CDC restarts lose events.",
    ),
    (
        "pg153",
        "data",
        "Postgres 15.3 still runs the legacy inventory database; it is frozen until the migration completes.",
    ),
    (
        "k8s129",
        "infra",
        "Kubernetes 1.29 is the version of the production clusters since the October upgrade window.",
    ),
    (
        "k8s128",
        "infra",
        "Kubernetes 1.28 still runs on the ML training cluster because the GPU operator is not certified for 1.29 yet.",
    ),
    (
        "sdk_ios_531",
        "mobile",
        "The iOS app 5.3.1 crashes on launch for users with VoiceOver enabled; the fix ships in 5.3.2.",
    ),
    (
        "sdk_ios_532",
        "mobile",
        "The iOS app 5.3.2 fixes the VoiceOver crash and is waiting for App Store review.",
    ),
    (
        "sdk_and_531",
        "mobile",
        "The Android app 5.3.1 drops push notifications on Xiaomi phones because of aggressive battery optimisation.",
    ),
    (
        "node20",
        "platform",
        "Node 20.11.1 is the runtime for all frontend builds; Node 18 images are no longer patched.",
    ),
    (
        "py312",
        "ml",
        "Python 3.12.2 breaks the feature pipeline because a pinned numpy wheel is missing; the ML images stay on Python 3.11.8.",
    ),
    # --- hosts ---
    (
        "db_prod_03",
        "infra",
        "db-prod-03.eu-west-1 is the primary of the orders database; its disk is at 81 percent and grows 2 percent a week.",
    ),
    (
        "db_prod_04",
        "infra",
        "db-prod-04.eu-west-1 is the synchronous replica of the orders database and serves the read-only reporting traffic.",
    ),
    (
        "db_stage_03",
        "infra",
        "db-stage-03.eu-west-1 is the staging copy of the orders database, restored from the prod snapshot every Sunday.",
    ),
    (
        "db_prod_03_us",
        "infra",
        "db-prod-03.us-east-1 is the primary of the US orders database and runs on io2 volumes.",
    ),
    (
        "kafka07",
        "data",
        "kafka-broker-07 has a failing disk and was removed from the ISR; its partitions are being reassigned.",
    ),
    (
        "kafka08",
        "data",
        "kafka-broker-08 runs the controller role and must be restarted last during rolling upgrades.",
    ),
    (
        "kafka17",
        "data",
        "kafka-broker-17 is a new broker in the analytics cluster, added to absorb the clickstream growth.",
    ),
    (
        "redis_cache_1",
        "platform",
        "redis-cache-1 holds the product catalogue cache with a 6 hour TTL and evicts by LRU.",
    ),
    (
        "redis_cache_2",
        "platform",
        "redis-cache-2 holds user sessions and must never evict; it runs with maxmemory-policy noeviction.",
    ),
    (
        "gpu_node_12",
        "ml",
        "gpu-node-12 has one faulty A100 that throws Xid 79 errors; jobs are pinned away from it.",
    ),
    (
        "gpu_node_21",
        "ml",
        "gpu-node-21 was added with eight H100 cards for the embedding model training.",
    ),
    # --- config keys ---
    (
        "max_pool_size",
        "platform",
        "Setting db.pool.max_size above 50 on the orders service exhausts Postgres connections during deploys.",
    ),
    (
        "max_pool_idle",
        "platform",
        "db.pool.max_idle controls how many idle connections the orders service keeps; 10 is enough.",
    ),
    (
        "pool_timeout",
        "platform",
        "db.pool.acquire_timeout_ms is 2000 on the orders service; lower values cause spurious 503s under load.",
    ),
    (
        "retry_backoff",
        "platform",
        "retry.backoff_ms defaults to 200 in the HTTP client and doubles on every attempt.",
    ),
    (
        "retry_max",
        "platform",
        "retry.max_attempts is 3 for calls to the payment gateway so a customer is never charged twice.",
    ),
    (
        "kafka_timeout",
        "data",
        "KAFKA_CONSUMER_TIMEOUT_MS must stay above the longest batch processing time or the consumer group rebalances.",
    ),
    (
        "kafka_poll",
        "data",
        "KAFKA_MAX_POLL_RECORDS was lowered to 200 for the enrichment consumer to keep batches under the timeout.",
    ),
    (
        "feature_flag_ck",
        "payments",
        "The feature flag checkout.new_flow is on for 20 percent of EU customers and off in the US.",
    ),
    (
        "feature_flag_ck2",
        "payments",
        "The feature flag checkout.new_flow_v2 enables Apple Pay inside the new checkout and is off everywhere.",
    ),
    (
        "hpa_min",
        "infra",
        "autoscaling.minReplicas is 3 for the search API so one zone failure never leaves it with a single pod.",
    ),
    (
        "hpa_max",
        "infra",
        "autoscaling.maxReplicas is 40 for the search API; above that the Elasticsearch cluster saturates.",
    ),
    (
        "camel_timeout",
        "platform",
        "ReadTimeoutSeconds in the gateway config applies per upstream call, not to the whole request.",
    ),
    (
        "camel_conn",
        "platform",
        "ConnectTimeoutSeconds in the gateway config is 2 seconds; the default of 30 hid dead upstreams.",
    ),
    # --- HTTP / app error codes ---
    (
        "e1042",
        "support",
        "Error E1042 in the mobile app means the card was declined by the issuer; support should ask for another card.",
    ),
    (
        "e1024",
        "support",
        "Error E1024 in the mobile app means the session expired during checkout; the user just has to log in again.",
    ),
    (
        "e1043",
        "support",
        "Error E1043 in the mobile app means 3-D Secure authentication failed or was abandoned.",
    ),
    (
        "err_conn_reset",
        "platform",
        "ERR_CONNECTION_RESET on the admin console comes from the WAF dropping uploads larger than 10 MB.",
    ),
    (
        "err_cert",
        "platform",
        "ERR_CERT_DATE_INVALID on internal dashboards means the internal CA bundle on the laptop is outdated.",
    ),
    (
        "http429",
        "platform",
        "HTTP 429 from the search API means the per-tenant rate limit of 50 requests per second was exceeded.",
    ),
    (
        "http503",
        "platform",
        "HTTP 503 from the search API during deploys comes from pods receiving traffic before the readiness probe passes.",
    ),
    (
        "xid79",
        "ml",
        "Xid 79 in the GPU driver log means the GPU fell off the bus; the node has to be drained and the card replaced.",
    ),
    (
        "xid48",
        "ml",
        "Xid 48 in the GPU driver log is a double-bit ECC error; the job restarts from its last checkpoint.",
    ),
    (
        "oom137",
        "ml",
        "Exit code 137 on training pods means the container was OOM-killed; the data loader workers were cut from 16 to 8.",
    ),
    (
        "exit143",
        "infra",
        "Exit code 143 on batch pods means SIGTERM during node drain; jobs must checkpoint within the 30 second grace period.",
    ),
    # --- metrics / dashboards / buckets ---
    (
        "s3_artifacts",
        "infra",
        "Build artifacts go to s3://acme-build-artifacts with a 30 day lifecycle rule.",
    ),
    (
        "s3_artifacts_eu",
        "infra",
        "s3://acme-build-artifacts-eu is the replica bucket for EU builds and must not be deleted by the cleanup job.",
    ),
    (
        "s3_ml",
        "ml",
        "Training checkpoints are stored in s3://acme-ml-checkpoints and are versioned for 90 days.",
    ),
    (
        "metric_p99",
        "platform",
        "The alert on http_request_duration_p99 fires when checkout latency stays above 800 ms for 10 minutes.",
    ),
    (
        "metric_p95",
        "platform",
        "http_request_duration_p95 is the SLO metric for the search API; the objective is 300 ms.",
    ),
    (
        "metric_lag",
        "data",
        "kafka_consumergroup_lag for the enrichment group should stay under 50,000 messages.",
    ),
    (
        "dash_checkout",
        "support",
        "The Grafana dashboard checkout-overview shows conversion, payment errors and gateway latency side by side.",
    ),
    (
        "dash_checkout_v2",
        "support",
        "The Grafana dashboard checkout-overview-v2 adds per-country breakdowns and replaces the old one next quarter.",
    ),
    # --- git / commits / branches ---
    (
        "sha_a1",
        "platform",
        "Commit 3f9c2e1 introduced the header size regression in the gateway; reverting it restores SSO.",
    ),
    (
        "sha_a2",
        "platform",
        "Commit 3f9c2e7 only updated the gateway changelog and can be ignored when bisecting.",
    ),
    (
        "branch_rel",
        "platform",
        "The branch release/2024.06 is frozen; only hotfixes approved by the release manager go in.",
    ),
    (
        "branch_rel2",
        "platform",
        "The branch release/2024.07 is open for features until the code freeze on the 15th.",
    ),
    # --- IPs, ports, cron ---
    (
        "ip_nat",
        "infra",
        "The office NAT address 203.0.113.24 is allow-listed on the admin console and on the VPN.",
    ),
    (
        "ip_nat2",
        "infra",
        "The address 203.0.113.42 belongs to the old office and should be removed from every allow list.",
    ),
    (
        "port_5432",
        "infra",
        "Port 5432 on the orders database is reachable only from the application subnets.",
    ),
    (
        "port_6379",
        "infra",
        "Port 6379 on the Redis nodes was exposed to the VPC peering by mistake and has been closed.",
    ),
    (
        "cron_2am",
        "data",
        "The warehouse export runs at 0 2 * * * UTC and must finish before the European business day starts.",
    ),
    (
        "cron_3am",
        "data",
        "The marketing attribution job runs at 0 3 * * * UTC after the warehouse export.",
    ),
    # --- model names / ml ---
    (
        "model_v7",
        "ml",
        "Ranking model rank-v7 improved click-through by 3 percent in the A/B test and is now the default.",
    ),
    (
        "model_v8",
        "ml",
        "Ranking model rank-v8 overfits to the holiday data and was rolled back after two days.",
    ),
    (
        "model_emb3",
        "ml",
        "The embedding model emb-small-3 produces 384-dimensional vectors and is used for semantic search.",
    ),
    (
        "model_emb4",
        "ml",
        "The embedding model emb-small-4 produces 768-dimensional vectors and needs a reindex before it can be used.",
    ),
    # --- SQLSTATE / driver errors (data, platform) ---
    (
        "sql23505",
        "platform",
        "SQLSTATE 23505 on the orders service means a unique violation; it happens when a retried insert reuses the order number.",
    ),
    (
        "sql23503",
        "platform",
        "SQLSTATE 23503 on the orders service means a foreign key violation; the line items were written before their order.",
    ),
    (
        "sql40001",
        "platform",
        "SQLSTATE 40001 on the orders service is a serialization failure; the transaction is retried up to three times.",
    ),
    (
        "sql53300",
        "platform",
        "SQLSTATE 53300 means too many connections; it appeared when db.pool.max_size was set to 80.",
    ),
    # --- Java / Python exceptions ---
    (
        "npe_cart",
        "platform",
        "A NullPointerException in CartMergeService appears when a guest cart is merged into an account with no address.",
    ),
    (
        "npe_cartv2",
        "platform",
        "A NullPointerException in CartMergeServiceV2 appears when the promotion list is empty; it is behind a flag.",
    ),
    (
        "keyerror_feat",
        "ml",
        "KeyError: 'user_age_bucket' in the feature pipeline means the upstream table skipped a partition.",
    ),
    (
        "keyerror_feat2",
        "ml",
        "KeyError: 'user_age_band' was the old column name; the feature pipeline was renamed in March.",
    ),
    # --- AWS error codes ---
    (
        "aws_throttle",
        "infra",
        "ThrottlingException from the DynamoDB sessions table shows up when a hot partition key takes all the capacity.",
    ),
    (
        "aws_provisioned",
        "infra",
        "ProvisionedThroughputExceededException on the DynamoDB carts table went away after switching to on-demand mode.",
    ),
    (
        "aws_access",
        "infra",
        "AccessDeniedException from KMS in the EU account means the role is missing kms:Decrypt on the new key.",
    ),
    # --- Helm charts / namespaces ---
    (
        "helm_ingress",
        "infra",
        "The ingress-nginx chart 4.10.1 fixes the annotation injection issue; 4.10.0 must not be used.",
    ),
    (
        "helm_ingress2",
        "infra",
        "The ingress-nginx chart 4.9.1 is pinned on the legacy cluster because it still runs Kubernetes 1.25.",
    ),
    (
        "ns_payments",
        "infra",
        "The namespace payments-prod holds the checkout and ledger services and has its own network policies.",
    ),
    (
        "ns_payments_stg",
        "infra",
        "The namespace payments-stg mirrors payments-prod with test card numbers only.",
    ),
    (
        "ns_search",
        "infra",
        "The namespace search-prod runs the search API and its Elasticsearch clients.",
    ),
    # --- env vars ---
    (
        "env_db_url",
        "platform",
        "DATABASE_URL for the orders service points at the PgBouncer pool, never at the database directly.",
    ),
    (
        "env_db_ro_url",
        "platform",
        "DATABASE_RO_URL points at the read replica and is used by the reporting endpoints only.",
    ),
    (
        "env_log_level",
        "platform",
        "LOG_LEVEL=debug must not be used in production because it logs request bodies.",
    ),
    # --- terraform modules ---
    (
        "tf_vpc",
        "infra",
        "The Terraform module modules/network/vpc creates the three private subnets per region.",
    ),
    (
        "tf_vpc_peer",
        "infra",
        "The Terraform module modules/network/vpc_peering connects the data VPC to the application VPC.",
    ),
    (
        "tf_rds",
        "infra",
        "The Terraform module modules/db/rds enforces encryption and a seven day backup retention.",
    ),
    # --- DNS names ---
    ("dns_api", "platform", "api.acme.example serves the public REST API behind the CDN."),
    (
        "dns_api_int",
        "platform",
        "api.internal.acme.example is the internal API hostname, reachable only inside the VPN.",
    ),
    (
        "dns_status",
        "support",
        "status.acme.example is the public status page, hosted with an external provider.",
    ),
    # --- more tickets ---
    (
        "ml77",
        "ml",
        "ML-77 is the request for more GPU hours to train the multilingual embedding model.",
    ),
    (
        "ml78",
        "ml",
        "ML-78 reports that the recommendation model recommends out-of-stock items on the home page.",
    ),
    ("ml87", "ml", "ML-87 tracks the label leakage found in the churn model's training data."),
    (
        "mob512",
        "mobile",
        "MOB-512 is the crash when rotating the phone on the payment screen of the Android app.",
    ),
    (
        "mob521",
        "mobile",
        "MOB-521 is the missing dark mode on the order history screen of the iOS app.",
    ),
    # --- more versions ---
    (
        "es817",
        "platform",
        "Elasticsearch 8.17.1 on the search cluster fixed the memory leak in the percolator.",
    ),
    (
        "es816",
        "platform",
        "Elasticsearch 8.16.0 leaked memory in the percolator and forced weekly restarts.",
    ),
    (
        "redis72",
        "platform",
        "Redis 7.2.4 is the version of every cache node after the summer upgrade.",
    ),
    ("kafka37", "data", "Kafka 3.7.0 brought tiered storage to the analytics cluster."),
    (
        "kafka36",
        "data",
        "Kafka 3.6.1 still runs on the payments cluster until the next maintenance window.",
    ),
    # --- more meaning facts ---
    (
        "m_weekend_deploys",
        "platform",
        "Nobody deploys to production on Fridays after three in the afternoon.",
    ),
    (
        "m_pairing",
        "platform",
        "Incidents are debugged in pairs so that knowledge spreads across the team.",
    ),
    (
        "m_alert_fatigue",
        "infra",
        "Alerts that nobody acted on for a month are deleted or turned into tickets.",
    ),
    (
        "m_cold_start",
        "platform",
        "Serverless functions in the checkout path are kept warm to avoid cold starts.",
    ),
    (
        "m_privacy_review",
        "security",
        "A privacy review is required before any new collection of personal data.",
    ),
    (
        "m_model_cards",
        "ml",
        "Each production model has a model card describing intended use and known limits.",
    ),
    (
        "m_holiday_staffing",
        "support",
        "Support doubles its weekend staffing during the holiday season.",
    ),
    (
        "m_warehouse_roles",
        "data",
        "Warehouse access is granted through roles per team, never to individual users.",
    ),
    # ===================== meaning facts (few or no identifiers) =====================
    (
        "m_oncall_pay",
        "payments",
        "The payments on-call rotation hands over every Monday at 10 in the morning, Berlin time.",
    ),
    (
        "m_oncall_infra",
        "infra",
        "Infrastructure on-call is follow-the-sun between the Berlin and Singapore offices.",
    ),
    (
        "m_postmortem",
        "support",
        "Every customer-facing outage gets a blameless postmortem within five working days.",
    ),
    (
        "m_freeze",
        "platform",
        "There is a deployment freeze from the 20th of December until the 2nd of January.",
    ),
    (
        "m_canary",
        "infra",
        "New releases go to a small canary group first and are promoted only if error rates stay flat.",
    ),
    (
        "m_backup",
        "infra",
        "Database backups are taken every night and a restore is rehearsed once a month.",
    ),
    (
        "m_restore_time",
        "infra",
        "Restoring the orders database from backup takes about four hours, so point-in-time recovery is preferred.",
    ),
    (
        "m_secrets",
        "security",
        "Secrets are never stored in the repository; services read them from the vault at startup.",
    ),
    (
        "m_mfa",
        "security",
        "Multi-factor authentication is mandatory for every employee account, including contractors.",
    ),
    (
        "m_phishing",
        "security",
        "A phishing campaign impersonating the HR portal targeted the sales team last week; nobody entered credentials.",
    ),
    (
        "m_laptops",
        "security",
        "Company laptops must have full disk encryption enabled before they can join the corporate network.",
    ),
    (
        "m_offboarding",
        "security",
        "When someone leaves, their access is revoked by the end of their last working day.",
    ),
    (
        "m_pii_logs",
        "security",
        "Personal data must be masked in application logs; email addresses are hashed before logging.",
    ),
    (
        "m_gdpr_delete",
        "data",
        "Customer deletion requests must be completed within thirty days, including backups that expire naturally.",
    ),
    (
        "m_retention_logs",
        "data",
        "Application logs are kept for fourteen days in the hot store and one year in cold storage.",
    ),
    (
        "m_warehouse_cost",
        "data",
        "Warehouse spend doubled last quarter, mostly from ad hoc queries that scan full tables.",
    ),
    (
        "m_partition",
        "data",
        "Large event tables are partitioned by day so that queries over a week read only seven partitions.",
    ),
    (
        "m_dbt_tests",
        "data",
        "Every model in the transformation project must have uniqueness and not-null tests on its key.",
    ),
    (
        "m_late_events",
        "data",
        "Mobile events can arrive up to three days late, so daily aggregates are recomputed for a rolling window.",
    ),
    (
        "m_timezone",
        "data",
        "All timestamps in the warehouse are stored in UTC and converted only in the dashboards.",
    ),
    (
        "m_sampling",
        "data",
        "The product analytics tool samples ten percent of sessions to keep costs down.",
    ),
    (
        "m_churn",
        "data",
        "Churn is defined as no purchase in the last ninety days for consumer accounts.",
    ),
    (
        "m_refund_window",
        "payments",
        "Customers can ask for a refund within fourteen days of delivery without giving a reason.",
    ),
    (
        "m_chargebacks",
        "payments",
        "Chargebacks rose sharply in Brazil after the new card acquirer was introduced.",
    ),
    (
        "m_payouts",
        "payments",
        "Marketplace sellers are paid out weekly, on Thursdays, minus the platform fee.",
    ),
    (
        "m_fee",
        "payments",
        "The platform fee for marketplace sellers is twelve percent of the order value.",
    ),
    (
        "m_fx",
        "payments",
        "Exchange rates are fixed once a day at noon and applied to every order placed that day.",
    ),
    (
        "m_fraud_rules",
        "payments",
        "Orders above two thousand euros from a new account are held for manual fraud review.",
    ),
    (
        "m_invoice_email",
        "payments",
        "Invoices are emailed as PDF attachments and also available in the customer portal.",
    ),
    (
        "m_tax_us",
        "payments",
        "Sales tax in the United States is calculated by an external tax service at checkout.",
    ),
    (
        "m_latency_budget",
        "platform",
        "The checkout page has a latency budget of one second end to end, measured at the browser.",
    ),
    (
        "m_cache_invalidation",
        "platform",
        "Product prices are cached for six hours, so a price change can take that long to show everywhere.",
    ),
    (
        "m_api_versioning",
        "platform",
        "Public API versions are supported for eighteen months after their successor is released.",
    ),
    (
        "m_deprecation",
        "platform",
        "Deprecated endpoints return a Sunset header with the date they will be removed.",
    ),
    (
        "m_code_review",
        "platform",
        "Every change to production code needs one approving review from someone outside the author's pair.",
    ),
    (
        "m_flaky",
        "platform",
        "Flaky tests are quarantined automatically after three failures in a week and a ticket is filed.",
    ),
    (
        "m_monorepo",
        "platform",
        "All backend services live in one monorepo and share a single dependency lock file.",
    ),
    (
        "m_build_time",
        "platform",
        "The full CI run takes about twenty-five minutes; most of it is the integration test suite.",
    ),
    (
        "m_feature_flags",
        "platform",
        "Feature flags older than three months are reviewed and removed if fully rolled out.",
    ),
    (
        "m_error_budget",
        "platform",
        "When a service burns its monthly error budget, feature work stops until reliability recovers.",
    ),
    (
        "m_k8s_requests",
        "infra",
        "Every pod must declare CPU and memory requests; the admission controller rejects pods without them.",
    ),
    (
        "m_spot",
        "infra",
        "Batch workloads run on spot instances and must tolerate being interrupted with two minutes notice.",
    ),
    (
        "m_multi_az",
        "infra",
        "Production services run in three availability zones so one zone can fail without an outage.",
    ),
    (
        "m_dns_ttl",
        "infra",
        "Public DNS records use a five minute TTL so that failovers propagate quickly.",
    ),
    (
        "m_cost_tags",
        "infra",
        "Every cloud resource must carry a team tag, or the cost report assigns it to the platform team.",
    ),
    (
        "m_terraform",
        "infra",
        "Infrastructure changes go through Terraform plans reviewed in pull requests; console changes are reverted.",
    ),
    (
        "m_disk_alert",
        "infra",
        "Disk usage alerts fire at eighty percent and page the on-call engineer at ninety.",
    ),
    (
        "m_cert_renewal",
        "infra",
        "Public TLS certificates renew automatically thirty days before expiry.",
    ),
    (
        "m_vpn",
        "infra",
        "Engineers reach internal dashboards only through the VPN, never over the public internet.",
    ),
    ("m_gpu_quota", "ml", "Each ML team gets a weekly GPU quota; unused hours do not roll over."),
    (
        "m_eval_set",
        "ml",
        "Model evaluations must use the frozen holdout set, never data seen in training.",
    ),
    (
        "m_drift",
        "ml",
        "Feature drift is monitored daily and a retrain is triggered when the drift score passes the threshold.",
    ),
    (
        "m_labeling",
        "ml",
        "Labelling is done by an external vendor, with ten percent of labels double checked in house.",
    ),
    (
        "m_bias_review",
        "ml",
        "Every model that affects pricing goes through a fairness review before launch.",
    ),
    (
        "m_inference_latency",
        "ml",
        "Online inference must answer within fifty milliseconds at the 99th percentile.",
    ),
    (
        "m_feature_store",
        "ml",
        "Features used online and offline come from the same feature store to avoid training-serving skew.",
    ),
    (
        "m_notebooks",
        "ml",
        "Notebooks are fine for exploration, but production pipelines must be code reviewed modules.",
    ),
    (
        "m_support_hours",
        "support",
        "Customer support answers chats from 8 to 20 on weekdays and by email at the weekend.",
    ),
    (
        "m_escalation",
        "support",
        "Support escalates to engineering through the incident channel when more than ten customers report the same problem.",
    ),
    (
        "m_sla_enterprise",
        "support",
        "Enterprise customers have a four hour response time commitment for urgent tickets.",
    ),
    (
        "m_macro",
        "support",
        "Support agents use saved replies for common questions but must personalise the greeting.",
    ),
    (
        "m_refund_support",
        "support",
        "Support agents may issue refunds up to fifty euros without asking a team lead.",
    ),
    (
        "m_status_page",
        "support",
        "The public status page is updated within fifteen minutes of a confirmed incident.",
    ),
    (
        "m_app_rating",
        "mobile",
        "The app store rating dropped after the last release because of the login loop on older phones.",
    ),
    (
        "m_push_optin",
        "mobile",
        "Only a third of iPhone users accept push notifications when asked on first launch.",
    ),
    (
        "m_release_train",
        "mobile",
        "Mobile apps ship on a two week release train; a missed train waits for the next one.",
    ),
    ("m_min_os", "mobile", "The apps support the last three major versions of iOS and Android."),
    (
        "m_crash_free",
        "mobile",
        "The crash-free session rate target for the mobile apps is above ninety-nine and a half percent.",
    ),
    ("m_offline", "mobile", "The shopping list works offline and syncs when the phone reconnects."),
    (
        "m_search_relevance",
        "platform",
        "Search relevance complaints mostly come from misspelled product names, so fuzzy matching was widened.",
    ),
    (
        "m_search_synonyms",
        "platform",
        "The search team maintains a synonym list so that sofa and couch return the same products.",
    ),
    (
        "m_recommend",
        "ml",
        "Recommendations on the home page are refreshed every night from the previous day's behaviour.",
    ),
    (
        "m_ab_duration",
        "ml",
        "A/B tests run for at least two full weeks to cover weekly shopping patterns.",
    ),
    (
        "m_pricing",
        "payments",
        "Prices shown to customers always include VAT in the European Union.",
    ),
    (
        "m_subscriptions",
        "payments",
        "Subscription renewals are attempted three times over a week before the subscription lapses.",
    ),
    (
        "m_dunning",
        "payments",
        "Failed renewal payments trigger reminder emails on day one, three and seven.",
    ),
    (
        "m_vendor_risk",
        "security",
        "New software vendors need a security questionnaire before they get any customer data.",
    ),
    (
        "m_pentest",
        "security",
        "An external penetration test is run every year before the compliance audit.",
    ),
    (
        "m_bug_bounty",
        "security",
        "The bug bounty program pays up to five thousand euros for critical findings.",
    ),
    (
        "m_least_priv",
        "security",
        "Production database access is granted per request and expires after eight hours.",
    ),
    (
        "m_sbom",
        "security",
        "Every container image ships with a software bill of materials generated at build time.",
    ),
    (
        "m_dependabot",
        "security",
        "Dependency update pull requests are merged weekly after the test suite passes.",
    ),
    (
        "m_incident_roles",
        "support",
        "During an incident one person commands, one communicates and the rest investigate.",
    ),
    (
        "m_runbooks",
        "infra",
        "Every alert links to a runbook describing the first three things to check.",
    ),
    (
        "m_chaos",
        "infra",
        "A chaos day once a quarter kills random instances in staging to test recovery.",
    ),
    ("m_capacity", "infra", "Capacity planning assumes traffic triples during the holiday season."),
    (
        "m_cdn",
        "infra",
        "Static assets are served from the CDN with a one year cache and fingerprinted file names.",
    ),
    (
        "m_queue_dlq",
        "data",
        "Messages that fail processing five times go to a dead letter queue that data engineers review daily.",
    ),
    (
        "m_schema_registry",
        "data",
        "Event schemas must be registered and backward compatible before producers deploy.",
    ),
    (
        "m_data_contracts",
        "data",
        "Producing teams own data contracts for their events and announce breaking changes two weeks ahead.",
    ),
    (
        "m_pii_warehouse",
        "data",
        "Only the privacy team may query columns tagged as personal data in the warehouse.",
    ),
    (
        "m_dashboard_owner",
        "data",
        "Every business dashboard needs a named owner or it is archived after sixty days.",
    ),
    (
        "m_forecast",
        "data",
        "The demand forecast is rebuilt weekly and feeds the warehouse staffing plan.",
    ),
    (
        "m_dedupe_orders",
        "data",
        "Orders are deduplicated on the order number before revenue is reported.",
    ),
    (
        "m_onboarding_eng",
        "platform",
        "New engineers ship a small change to production in their first week.",
    ),
    (
        "m_docs",
        "platform",
        "Architecture decisions are recorded as short decision records next to the code.",
    ),
    (
        "m_interviews",
        "platform",
        "Engineering interviews include a pairing exercise instead of whiteboard puzzles.",
    ),
    (
        "m_tech_debt",
        "platform",
        "Teams spend roughly a fifth of each sprint on maintenance and technical debt.",
    ),
    (
        "m_hackweek",
        "platform",
        "Hack week happens twice a year and projects are demoed on the last Friday.",
    ),
    ("m_meeting_free", "platform", "Wednesdays are meeting-free for engineering teams."),
    (
        "m_lb_health",
        "infra",
        "The load balancer removes a backend after three failed health checks ten seconds apart.",
    ),
    (
        "m_ntp",
        "infra",
        "All servers sync time with the internal NTP pool; clock skew above 500 ms raises an alert.",
    ),
    (
        "m_ssh_keys",
        "security",
        "SSH keys are short-lived certificates issued by the access broker, valid for one day.",
    ),
    (
        "m_audit_logs",
        "security",
        "Administrative actions are written to an append-only audit log that nobody can edit.",
    ),
    (
        "m_ddos",
        "security",
        "Volumetric attacks are absorbed by the CDN provider's scrubbing centres.",
    ),
    (
        "m_password_policy",
        "security",
        "Passwords must be at least twelve characters; there is no forced periodic change.",
    ),
    (
        "m_support_tools",
        "support",
        "Support agents can see order history but never full card numbers.",
    ),
    (
        "m_nps",
        "support",
        "Net promoter score rose after delivery tracking was added to the order page.",
    ),
    (
        "m_return_labels",
        "support",
        "Return labels are generated in the portal; support should not email them manually.",
    ),
    (
        "m_carrier",
        "support",
        "Most late deliveries last month came from one regional carrier in the north.",
    ),
    (
        "m_warehouse_ops",
        "support",
        "The fulfilment centre stops picking orders at 18:00 for same-day shipping.",
    ),
    ("m_peak_traffic", "platform", "Traffic peaks on Sunday evenings between eight and ten."),
    ("m_mobile_share", "mobile", "Two thirds of orders now come from the mobile apps."),
    (
        "m_deeplinks",
        "mobile",
        "Marketing emails use deep links that open the app when it is installed and the website otherwise.",
    ),
    (
        "m_app_size",
        "mobile",
        "The Android app grew past a hundred megabytes, which hurts installs in emerging markets.",
    ),
    ("m_gpu_cost", "ml", "GPU spend is the largest line in the ML budget, ahead of storage."),
    (
        "m_llm_policy",
        "ml",
        "Customer data must not be sent to external language model APIs without a signed processing agreement.",
    ),
    (
        "m_model_registry",
        "ml",
        "Every deployed model is registered with its training data snapshot and evaluation report.",
    ),
    ("m_shadow", "ml", "New models run in shadow mode for a week before they serve real traffic."),
    (
        "m_retrain",
        "ml",
        "The fraud model is retrained every month on the latest confirmed chargebacks.",
    ),
    (
        "m_budget_alerts",
        "infra",
        "Cloud budget alerts go to the team lead when monthly spend passes eighty percent of plan.",
    ),
    (
        "m_sandbox",
        "infra",
        "Each engineer gets a sandbox account that is wiped every Friday night.",
    ),
    ("m_ipv6", "infra", "The public load balancers accept IPv6 since the spring network upgrade."),
    (
        "m_logs_search",
        "infra",
        "Logs are searched through the central logging tool; nobody should ssh into boxes to grep files.",
    ),
    (
        "m_tracing",
        "platform",
        "Distributed tracing samples one percent of requests, and every request that errors.",
    ),
    (
        "m_healthz",
        "platform",
        "Liveness probes must not check downstream dependencies, or one slow database restarts every pod.",
    ),
    (
        "m_graceful",
        "platform",
        "Services must finish in-flight requests within twenty seconds after receiving a shutdown signal.",
    ),
    (
        "m_idempotency",
        "payments",
        "Every payment request carries an idempotency key so retries never charge twice.",
    ),
    (
        "m_psp_failover",
        "payments",
        "If the primary payment provider fails, traffic switches to the secondary one within a minute.",
    ),
    ("m_settlement", "payments", "Card settlements arrive two business days after capture."),
    (
        "m_coupon_abuse",
        "payments",
        "Coupon abuse comes mostly from newly created accounts using disposable email addresses.",
    ),
    (
        "m_gift_cards",
        "payments",
        "Gift cards never expire and can be combined with one coupon per order.",
    ),
    (
        "m_data_quality",
        "data",
        "Data quality checks block the morning dashboards if yesterday's order count drops by more than half.",
    ),
    ("m_reverse_etl", "data", "Customer segments are synced back to the email tool every hour."),
    (
        "m_lineage",
        "data",
        "Column-level lineage is available for every model in the warehouse catalogue.",
    ),
    (
        "m_sla_data",
        "data",
        "The executive revenue dashboard must be fresh by seven in the morning.",
    ),
    (
        "m_vacuum",
        "data",
        "Autovacuum falls behind on the events table during bulk loads, so it is vacuumed manually afterwards.",
    ),
    ("m_read_replicas", "data", "Analysts query the read replicas, never the primary databases."),
    (
        "m_kafka_retention",
        "data",
        "Kafka topics keep seven days of data; compacted topics keep the latest value per key forever.",
    ),
    (
        "m_exactly_once",
        "data",
        "The payment events pipeline uses transactional producers to get exactly-once delivery.",
    ),
    (
        "m_accessibility",
        "mobile",
        "Every new screen is tested with the screen reader before release.",
    ),
    (
        "m_dark_mode",
        "mobile",
        "Dark mode is used by about forty percent of app users in the evening.",
    ),
    (
        "m_localization",
        "mobile",
        "Translations are done by a vendor and arrive three days after the strings freeze.",
    ),
    (
        "m_support_languages",
        "support",
        "Support is offered in English, German, French and Spanish.",
    ),
    (
        "m_refund_fraud",
        "support",
        "Repeated refund claims for items marked delivered are flagged for investigation.",
    ),
    ("m_phone_support", "support", "Phone support is only available to enterprise customers."),
    (
        "m_cookie_banner",
        "platform",
        "The cookie banner must block analytics scripts until the visitor consents.",
    ),
    (
        "m_sitemaps",
        "platform",
        "Sitemaps are regenerated every night so new products are found by search engines.",
    ),
    (
        "m_image_resize",
        "platform",
        "Product images are resized on the fly by the image service and cached at the edge.",
    ),
    (
        "m_rate_limit_login",
        "security",
        "Login attempts are limited to five per minute per account and per address.",
    ),
    (
        "m_captcha",
        "security",
        "A captcha appears only after repeated failed logins, to keep friction low.",
    ),
    (
        "m_encryption_rest",
        "security",
        "All databases and buckets are encrypted at rest with keys managed by the cloud provider.",
    ),
    (
        "m_key_rotation",
        "security",
        "Signing keys for access tokens rotate every ninety days with an overlap of a week.",
    ),
]

QUERIES: list[tuple[str, str, list[str]]] = [
    # --- identifier ---
    ("identifier", "ORA-00942", ["ora942"]),
    ("identifier", "ORA-00904", ["ora904"]),
    ("identifier", "ORA-12514", ["ora12514"]),
    ("identifier", "ORA-12541", ["ora12541"]),
    ("identifier", "CVE-2024-3094", ["cve3094"]),
    ("identifier", "CVE-2024-3049", ["cve3049"]),
    ("identifier", "CVE-2021-45046", ["cve45046"]),
    ("identifier", "are we affected by CVE-2023-4863", ["cve4863"]),
    ("identifier", "src/billing/invoice.py", ["invoice_py"]),
    ("identifier", "src/billing/invoices.py", ["invoices_py"]),
    ("identifier", "src/billing/refunds.py", ["refunds_py"]),
    ("identifier", "what does src/auth/token.py do", ["token_py"]),
    ("identifier", "sessions.py", ["sessions_py"]),
    ("identifier", "deploy/staging/values.yaml", ["deploy_stage_yaml"]),
    ("identifier", "JIRA-4411", ["jira4411"]),
    ("identifier", "JIRA-4412", ["jira4412"]),
    ("identifier", "status of JIRA-4141", ["jira4141"]),
    ("identifier", "OPS-1270", ["ops1270"]),
    ("identifier", "DATA-313", ["data313"]),
    ("identifier", "SEC-89", ["sec89"]),
    ("identifier", "INC-2219", ["inc2219"]),
    ("identifier", "gateway v2.14.2", ["gw2142"]),
    ("identifier", "v2.14.3", ["gw2143"]),
    ("identifier", "Postgres 16.2", ["pg162"]),
    ("identifier", "db-prod-04.eu-west-1", ["db_prod_04"]),
    ("identifier", "db-prod-03.us-east-1", ["db_prod_03_us"]),
    ("identifier", "kafka-broker-07", ["kafka07"]),
    ("identifier", "gpu-node-12", ["gpu_node_12"]),
    ("identifier", "db.pool.max_idle", ["max_pool_idle"]),
    ("identifier", "retry.max_attempts", ["retry_max"]),
    ("identifier", "KAFKA_MAX_POLL_RECORDS", ["kafka_poll"]),
    ("identifier", "checkout.new_flow_v2", ["feature_flag_ck2"]),
    ("identifier", "ConnectTimeoutSeconds", ["camel_conn"]),
    ("identifier", "E1043", ["e1043"]),
    ("identifier", "error E1024", ["e1024"]),
    ("identifier", "Xid 48", ["xid48"]),
    ("identifier", "s3://acme-build-artifacts-eu", ["s3_artifacts_eu"]),
    ("identifier", "checkout-overview-v2", ["dash_checkout_v2"]),
    ("identifier", "3f9c2e7", ["sha_a2"]),
    ("identifier", "203.0.113.42", ["ip_nat2"]),
    ("identifier", "rank-v8", ["model_v8"]),
    ("identifier", "http_request_duration_p95", ["metric_p95"]),
    ("identifier", "SQLSTATE 23503", ["sql23503"]),
    ("identifier", "SQLSTATE 40001", ["sql40001"]),
    ("identifier", "CartMergeServiceV2", ["npe_cartv2"]),
    ("identifier", "KeyError: 'user_age_band'", ["keyerror_feat2"]),
    ("identifier", "ProvisionedThroughputExceededException", ["aws_provisioned"]),
    ("identifier", "ingress-nginx 4.10.0", ["helm_ingress"]),
    ("identifier", "payments-stg", ["ns_payments_stg"]),
    ("identifier", "DATABASE_RO_URL", ["env_db_ro_url"]),
    ("identifier", "modules/network/vpc_peering", ["tf_vpc_peer"]),
    ("identifier", "api.internal.acme.example", ["dns_api_int"]),
    ("identifier", "ML-78", ["ml78"]),
    ("identifier", "MOB-521", ["mob521"]),
    ("identifier", "Elasticsearch 8.16.0", ["es816"]),
    ("identifier", "Kafka 3.6.1", ["kafka36"]),
    # --- keyword ---
    ("keyword", "staging table renamed loader", ["ora942"]),
    ("keyword", "snapshot too old undo retention", ["ora1555"]),
    ("keyword", "xz backdoor build images", ["cve3094"]),
    ("keyword", "HTTP/2 rapid reset concurrent streams", ["cve44487"]),
    ("keyword", "tax rounding line item", ["invoice_py"]),
    ("keyword", "revoke refresh tokens password reset", ["tokens_py"]),
    ("keyword", "duplicate charge double click", ["jira4411"]),
    ("keyword", "yen invoices minor unit", ["jira4412"]),
    ("keyword", "bastion VPN port 22", ["ops1270"]),
    ("keyword", "expired TLS certificate Black Friday", ["inc2291"]),
    ("keyword", "VoiceOver crash launch", ["sdk_ios_531", "sdk_ios_532"]),
    ("keyword", "Xiaomi push notifications battery", ["sdk_and_531"]),
    ("keyword", "failing disk ISR reassigned", ["kafka07"]),
    ("keyword", "sessions noeviction", ["redis_cache_2"]),
    ("keyword", "card declined issuer", ["e1042"]),
    ("keyword", "WAF uploads 10 MB", ["err_conn_reset"]),
    ("keyword", "OOM killed data loader workers", ["oom137"]),
    ("keyword", "spot instances interrupted", ["m_spot"]),
    ("keyword", "dead letter queue", ["m_queue_dlq"]),
    ("keyword", "platform fee marketplace", ["m_fee"]),
    ("keyword", "meeting-free Wednesdays", ["m_meeting_free"]),
    ("keyword", "sofa couch synonyms", ["m_search_synonyms"]),
    # --- question ---
    ("question", "Why does the nightly ETL fail with a missing column?", ["ora904"]),
    ("question", "Which log4j version did we move the JVM services to?", ["cve44228"]),
    ("question", "Where are partial refunds calculated?", ["refund_py"]),
    ("question", "How long do access tokens live?", ["token_py"]),
    ("question", "What percentage of traffic does the canary get in production?", ["deploy_yaml"]),
    ("question", "Which gateway version should run in production?", ["gw2143"]),
    ("question", "Why is the ML training cluster still on the older Kubernetes?", ["k8s128"]),
    ("question", "Which database host serves the read-only reporting traffic?", ["db_prod_04"]),
    (
        "question",
        "How many connections can the orders service pool hold before Postgres runs out?",
        ["max_pool_size"],
    ),
    ("question", "How often does the HTTP client back off between retries?", ["retry_backoff"]),
    ("question", "What does exit code 143 mean on batch pods?", ["exit143"]),
    ("question", "When does the warehouse export run?", ["cron_2am"]),
    ("question", "Who is on call for infrastructure at night?", ["m_oncall_infra"]),
    (
        "question",
        "How long does it take to restore the orders database from backup?",
        ["m_restore_time"],
    ),
    ("question", "What happens when someone leaves the company?", ["m_offboarding"]),
    ("question", "How long are application logs kept?", ["m_retention_logs"]),
    ("question", "When do marketplace sellers get paid?", ["m_payouts"]),
    ("question", "Which orders are held for manual fraud review?", ["m_fraud_rules"]),
    ("question", "What happens when a service runs out of error budget?", ["m_error_budget"]),
    ("question", "How fast must online inference answer?", ["m_inference_latency"]),
    ("question", "When is customer support available?", ["m_support_hours"]),
    ("question", "How many iPhone users accept push notifications?", ["m_push_optin"]),
    ("question", "Why did the app store rating drop?", ["m_app_rating"]),
    ("question", "How much can a support agent refund without approval?", ["m_refund_support"]),
    # --- paraphrase ---
    (
        "paraphrase",
        "the overnight warehouse load breaks because a table got a new name",
        ["ora942"],
    ),
    ("paraphrase", "reporting queries die because old undo data is gone", ["ora1555"]),
    ("paraphrase", "the compression library that shipped a hidden backdoor", ["cve3094"]),
    (
        "paraphrase",
        "customers got billed twice after pressing the buy button two times",
        ["jira4411"],
    ),
    ("paraphrase", "Belgian customers are missing their tax id on bills", ["jira4413"]),
    ("paraphrase", "the checkout went down because a certificate ran out", ["inc2291"]),
    ("paraphrase", "search broke when the cluster ran out of memory", ["inc2292"]),
    (
        "paraphrase",
        "the blind users' accessibility crash on iPhone is fixed in the next build",
        ["sdk_ios_532"],
    ),
    (
        "paraphrase",
        "the graphics card on a training machine keeps disappearing from the bus",
        ["gpu_node_12", "xid79"],
    ),
    ("paraphrase", "the main orders database server is running out of disk", ["db_prod_03"]),
    ("paraphrase", "one message broker has a broken drive", ["kafka07"]),
    ("paraphrase", "the user's login expired in the middle of paying", ["e1024"]),
    ("paraphrase", "pods get traffic before they are ready during rollouts", ["http503"]),
    (
        "paraphrase",
        "the payments rotation changes hands at the start of the week",
        ["m_oncall_pay"],
    ),
    ("paraphrase", "no releases over the Christmas holidays", ["m_freeze"]),
    ("paraphrase", "a fake HR website tried to steal salespeople's passwords", ["m_phishing"]),
    (
        "paraphrase",
        "we must erase a customer's data within a month of their request",
        ["m_gdpr_delete"],
    ),
    ("paraphrase", "the data warehouse bill went up twice as much", ["m_warehouse_cost"]),
    (
        "paraphrase",
        "buyers may return goods for two weeks with no explanation",
        ["m_refund_window"],
    ),
    (
        "paraphrase",
        "every pull request needs a second pair of eyes from outside the pair",
        ["m_code_review"],
    ),
    ("paraphrase", "we survive losing a whole datacenter zone", ["m_multi_az"]),
    (
        "paraphrase",
        "the model is checked for unfair treatment before it sets prices",
        ["m_bias_review"],
    ),
    (
        "paraphrase",
        "big customers get an answer within four hours when it is urgent",
        ["m_sla_enterprise"],
    ),
    ("paraphrase", "people mostly shop from their phones now", ["m_mobile_share"]),
    ("paraphrase", "health checks must not depend on other services being up", ["m_healthz"]),
    ("paraphrase", "coupon fraud comes from throwaway accounts", ["m_coupon_abuse"]),
]
