package httpapi

import (
	"sort"

	"github.com/tablebridge/tablebridge/shared/apierr"
)

// serviceVersions are the Azure Storage service versions ("Versioning for
// Azure Storage", "Previous Azure Storage service versions"), oldest first.
// A request's x-ms-version must name one of them: Azure answers any other
// value with 400 InvalidHeaderValue.
var serviceVersions = []string{
	"2009-09-19", "2011-08-18", "2012-02-12", "2013-08-15", "2014-02-14",
	"2015-02-21", "2015-04-05", "2015-07-08", "2015-12-11", "2016-05-31",
	"2017-04-17", "2017-07-29", "2017-11-09", "2018-03-28", "2018-11-09",
	"2019-02-02", "2019-07-07", "2019-10-10", "2019-12-12", "2020-02-10",
	"2020-04-08", "2020-06-12", "2020-08-04", "2020-10-02", "2020-12-06",
	"2021-02-12", "2021-04-10", "2021-06-08", "2021-08-06", "2021-10-04",
	"2021-12-02", "2022-11-02", "2023-01-03", "2023-05-03", "2023-08-03",
	"2023-11-03", "2024-02-04", "2024-05-04", "2024-08-04", "2024-11-04",
	"2025-01-05", "2025-05-05", "2025-07-05", "2025-11-05",
}

// knownVersion reports whether v is a service version. A well-formed date
// after the newest version listed is taken too: Azure releases versions
// several times a year and SDKs adopt them, and refusing every client
// newer than this list would break them on the day they update, while
// Table storage's protocol has not changed between versions since
// 2019-02-02.
func knownVersion(v string) bool {
	i := sort.SearchStrings(serviceVersions, v)
	if i < len(serviceVersions) && serviceVersions[i] == v {
		return true
	}
	return i == len(serviceVersions) && isDate(v)
}

// isDate reports whether s is a calendar date written YYYY-MM-DD.
func isDate(s string) bool {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return false
	}
	for i, c := range []byte(s) {
		if i != 4 && i != 7 && (c < '0' || c > '9') {
			return false
		}
	}
	month := int(s[5]-'0')*10 + int(s[6]-'0')
	day := int(s[8]-'0')*10 + int(s[9]-'0')
	return month >= 1 && month <= 12 && day >= 1 && day <= 31
}

// checkVersion refuses an x-ms-version that names no service version, with
// Azure's 400 InvalidHeaderValue, and answers it with the default version
// rather than echoing the value back. No header is fine: SAS and anonymous
// requests may omit it.
func checkVersion(c *call) error {
	v := headerValue(c.r.Header, "X-Ms-Version")
	if v == "" || knownVersion(v) {
		return nil
	}
	c.version = defaultVersion
	return apierr.Newf(apierr.InvalidHeaderValue, "HeaderName: x-ms-version\nHeaderValue: %s", v)
}
