package httpapi

import (
	"net/http"
	"strconv"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/tables"
)

func (h *Handler) createTable(c *call) (*response, error) {
	level, err := metadataLevel(c)
	if err != nil {
		return nil, err
	}
	body, err := readBody(c.r)
	if err != nil {
		return nil, err
	}
	defer putBodyBuffer(body)
	name, err := decodeTableName(body)
	if err != nil {
		return nil, err
	}
	c.res.table = name
	info, err := h.svc.CreateTable(c.r.Context(), c.scope, name)
	if err != nil {
		return nil, err
	}
	loc := c.baseURL + "/Tables('" + info.Name + "')"
	resp := &response{location: loc}
	if noContent, explicit := preference(c.r); noContent {
		// DataServiceId only on the 204: Azure's 201 carries Location
		// alone (azure-sdk-for-net sdk/tables/Azure.Data.Tables/tests/
		// SessionRecords/TableServiceClientLiveTests/GetTablesReturnsTablesWithFilter.json),
		// its 204 both (azure-cosmos-table-python azure-cosmosdb-table/
		// tests/recordings/test_table.test_create_table_with_already_existing_table_fail_on_exist.yaml).
		resp.status, resp.dataServiceID, resp.preferenceApplied = http.StatusNoContent, loc, "return-no-content"
		return resp, nil
	} else if explicit {
		resp.preferenceApplied = "return-content"
	}
	resp.status = http.StatusCreated
	resp.contentType = jsonContentType(level)
	resp.body = appendTable(nil, level, c.baseURL, c.account, info.Name, true)
	return resp, nil
}

// decodeTableName reads {"TableName":"t"} with the entity decoder, so the
// body follows the same JSON rules as entities.
func decodeTableName(body []byte) (string, error) {
	var name string
	found := false
	err := edm.DecodeObject(body, func(n string, v edm.Value, null bool) error {
		if n == "TableName" {
			if null || v.Type != edm.String {
				return apierr.Newf(apierr.InvalidInput, "TableName must be a string.")
			}
			name, found = v.Str, true
		}
		return nil
	})
	if err != nil {
		if _, ok := apierr.As(err); ok {
			return "", err
		}
		return "", &apierr.Error{Code: apierr.InvalidInput, Detail: err.Error(), Err: err}
	}
	if !found {
		return "", apierr.Newf(apierr.PropertiesNeedValue, "TableName is required.")
	}
	return name, nil
}

func (h *Handler) deleteTable(c *call) (*response, error) {
	if err := h.svc.DeleteTable(c.r.Context(), c.scope, c.res.table); err != nil {
		return nil, err
	}
	return &response{status: http.StatusNoContent}, nil
}

func (h *Handler) getTable(c *call) (*response, error) {
	level, err := metadataLevel(c)
	if err != nil {
		return nil, err
	}
	info, err := h.svc.GetTable(c.r.Context(), c.scope, c.res.table)
	if err != nil {
		return nil, err
	}
	return &response{
		status:      http.StatusOK,
		contentType: jsonContentType(level),
		body:        appendTable(nil, level, c.baseURL, c.account, info.Name, true),
	}, nil
}

func (h *Handler) queryTables(c *call) (*response, error) {
	level, err := metadataLevel(c)
	if err != nil {
		return nil, err
	}
	q := c.query
	in := tables.QueryTablesInput{Filter: q.Get("$filter")}
	if in.Top, err = parseTop(q.Get("$top")); err != nil {
		return nil, err
	}
	if in.NextTableName, err = tableCursor(q); err != nil {
		return nil, err
	}
	page, err := h.svc.QueryTables(c.r.Context(), c.scope, in)
	if err != nil {
		return nil, err
	}
	b := []byte{'{'}
	if level != edm.NoMetadata {
		b = append(b, `"odata.metadata":`...)
		b = edm.AppendString(b, c.baseURL+"/$metadata#Tables")
		b = append(b, ',')
	}
	b = append(b, `"value":[`...)
	budget := h.answerBudget()
	budget.take(b)
	budget.take([]byte("]}"))
	for i, t := range page.Tables {
		mark := len(b)
		if i > 0 {
			b = append(b, ',')
		}
		b = appendTable(b, level, c.baseURL, c.account, t.Name, false)
		if !budget.take(b[mark:]) && i > 0 {
			// Resume after the last table sent (QueryTablesInput.NextTableName).
			b, page.NextTableName = b[:mark], page.Tables[i-1].Name
			break
		}
	}
	b = append(b, "]}"...)
	resp := &response{status: http.StatusOK, contentType: jsonContentType(level), body: b}
	if page.NextTableName != "" {
		resp.header = http.Header{"X-Ms-Continuation-Nexttablename": {encodeToken(page.NextTableName)}}
	}
	return resp, nil
}

// parseTop reads $top: an integer from 0 to 1000. Azure accepts $top=0
// (Azure Storage Explorer's first page) and answers it with no entities.
func parseTop(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > tables.MaxPageSize {
		return 0, apierr.Newf(apierr.InvalidInput, "$top=%s must be an integer from 0 to %d.", s, tables.MaxPageSize)
	}
	if n == 0 {
		return tables.NoEntities, nil
	}
	return n, nil
}
