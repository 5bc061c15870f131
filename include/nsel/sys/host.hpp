// Facts about this node, read without running anything.
#pragma once

#include <string>

namespace nsel {

// gethostname(), or "" when it fails.
std::string host_name();

// This node's address: the first IPv4 address of an interface that is up and not loopback
// (getifaddrs), else the first such IPv6 address, else the address the host name resolves to,
// else "127.0.0.1".
std::string node_ip_address();

// UTC now, "2026-11-29T12:03:04.123Z".
std::string utc_timestamp_now();

}  // namespace nsel
