"""CC8xx: the ranks of a job (`rules`: the records; `fingerprint`: what each rank reports about itself; `agree`: the
differences between ranks; `check`: what one rank can tell alone). The exchange itself is `contract/report/exchange`."""
